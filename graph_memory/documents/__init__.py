"""Long documents (seed 004): a verified routing index per document, and answers in the document's own words.

- `terms`: the literal checks (a term on its section's pages, a quote on its page) and BM25.
- `offline`: sections from headings, terms by tf-idf, with no model.
- `model`: the index, router and answer calls through the summary writer's client.
- `index`: build, store, flag stale, rebuild nightly, build on demand.
- `answers`: ask a case's documents for one viewer (the wall first), JSON or streamed, always logged.
"""
