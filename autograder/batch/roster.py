"""Who submitted what: the people behind one submission, as its platform names them.

Each platform (``autograder.batch.platforms``) reads its own export into
:class:`Submitters`: Gradescope's ``submission_metadata.yml`` (names, emails,
sids; a group lists several), Moodle's folder names and grading worksheet
(the name, and the participant id), Canvas's file names and gradebook export
(the user id, the SIS ids).  The gradebook shows ``name, email, sid``; the
platform's own ids (``ids``) and logins are what its grade files and
``--only`` match on.
"""

from __future__ import annotations

from dataclasses import dataclass

COLUMNS = ("name", "email", "sid")


@dataclass(frozen=True)
class Submitters:
    names: tuple[str, ...]
    emails: tuple[str, ...]
    sids: tuple[str, ...]
    logins: tuple[str, ...] = ()  # Canvas's SIS Login ID, Moodle's username
    ids: tuple[str, ...] = ()  # the platform's own id of each (Canvas's user id, Moodle's participant id)

    def columns(self) -> list[str]:
        return ["; ".join(v) for v in (self.names, self.emails, self.sids)]

    def keys(self) -> tuple[str, ...]:
        """Everything a person may be named by on the command line (``--only``)."""
        return tuple(k for k in (*self.names, *self.emails, *self.sids, *self.logins, *self.ids) if k)


NOBODY = Submitters((), (), ())
