"""The main suite, against the reference host (practice/, accounts/, config/).

Its folders mirror graph_memory/'s: wall/, viewer/, map/, vectors/, plumbing/, admin/, api/ (and the MCP
server), summaries/, refresh/, documents/, lint/, ledger/, consent/; a test of graph_memory/<folder>/<module>.py
is tests/<folder>/test_<module>.py where one module is its subject. host/ tests the reference host's own code;
contracts/ holds the suites that hold the whole app to a promise (the wall proof, side channels, faults,
deletion, the import layers, docs, the wheel, migrate, system checks, types, one firm's plans and partitions).
tests/contracts/test_layout.py keeps it so.

At the top: the support modules the suites share (factories.py, cast.py — the one cast of users —,
api_support.py, wall_world.py and wall_probe.py, openai_server.py, the generated corpora); the other
hosts' suites (second_host/, third_host/) run in their own invocations and import some of them.
"""
