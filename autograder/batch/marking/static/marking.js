// The marking page's behaviour: save a mark, keys to move, the marker's name kept in the browser.
// Served from this app (no CDN); the page's Content-Security-Policy allows no other script.
(function () {
  "use strict";
  const page = document.getElementById("page");
  if (!page) return;
  const form = document.getElementById("mark-form");
  const points = document.getElementById("points");
  const comment = document.getElementById("comment");
  const marker = document.getElementById("marker");
  const status = document.getElementById("status");
  let replace = false;  // set after a conflict: the next save replaces the other marker's mark

  if (!marker.value) marker.value = localStorage.getItem("marker") || "";
  marker.addEventListener("change", () => localStorage.setItem("marker", marker.value.trim()));

  function go(url) { if (url) window.location.href = url; }

  async function save(andNext) {
    if (!marker.value.trim()) { status.textContent = "Write your name in the Marker box first."; marker.focus(); return; }
    localStorage.setItem("marker", marker.value.trim());
    const body = {submission: page.dataset.submission, question: page.dataset.question,
                  points: points.value, comment: comment.value, marker: marker.value.trim(), replace: replace};
    let reply;
    try {
      reply = await fetch("/api/mark", {method: "POST", body: JSON.stringify(body),
        headers: {"Content-Type": "application/json", "X-Marking-Token": page.dataset.token}});
    } catch (e) { status.textContent = "Not saved: the marking server does not answer."; return; }
    const data = await reply.json().catch(() => ({}));
    if (reply.status === 409) {
      const c = data.conflict || {};
      status.className = "conflict";
      status.textContent = "Not saved: " + (c.marker || "another marker") + " marked this " + c.points +
        (c.comment ? " (" + c.comment + ")" : "") + " meanwhile. Save again to replace their mark.";
      replace = true;
      return;
    }
    if (!reply.ok) { status.className = "conflict"; status.textContent = "Not saved: " + (data.error || reply.status); return; }
    replace = false;
    status.className = "";
    status.textContent = data.entry ? "Saved: " + data.entry.points + " by " + data.entry.marker : "Mark taken away.";
    document.getElementById("marked").textContent = data.progress.marked;
    document.getElementById("to-mark").textContent = data.progress.to_mark;
    if (andNext) go(page.dataset.next || page.dataset.nextUnmarked);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); save(true); });
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); save(true); return; }
    const typing = ["INPUT", "TEXTAREA"].includes(document.activeElement.tagName);
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = {ArrowRight: page.dataset.next, n: page.dataset.next, ArrowLeft: page.dataset.prev,
                  p: page.dataset.prev, "]": page.dataset.nextQuestion, "[": page.dataset.prevQuestion,
                  u: page.dataset.nextUnmarked};
    if (e.key === "m") { e.preventDefault(); points.focus(); return; }
    if (keys[e.key]) { e.preventDefault(); go(keys[e.key]); }
  });
})();
