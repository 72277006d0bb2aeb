"""Results folders: the one place that writes a command's result files.

:mod:`runs.atomic` holds the atomic writers (temporary file, ``fsync``,
rename) and the strict JSON reader; :mod:`runs.results` holds the run
manifest (``complete: false`` first, ``true`` last), the refusal of a folder
holding other settings, and the readers' checks; :mod:`runs.lock` the lock
that lets one run at a time write a folder, and :mod:`runs.folders` the
checks, writes and deletions that never go through a link. The package sits at the
bottom layer beside :mod:`gt_llm` and :mod:`solvers`: it imports neither,
and every package may import it.
"""
