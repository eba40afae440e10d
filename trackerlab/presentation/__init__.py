"""The public data the notebook layer reads: the numbering of a tape's nodes, the text of values and calls,
and the language of that text."""
