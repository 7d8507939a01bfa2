"""The write-back guard (issue 31): what a note filed into a case may carry (guard.py), and the facts of a
text as it compares them (facts.py)."""
