"""MLflow both ways: the layout (every name), the store, the writer process, the logger that lays out a
comparison, and the reader (``load_comparison``)."""
