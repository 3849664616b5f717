"""Code that runs in both modes: labs, manifests, results, languages, files."""
