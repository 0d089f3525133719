"""What a comparison produced and every way a person reads it: sentences, rows, console, JSON, HTML, SVG.

``results`` holds the result types, ``rows`` the orders and formats every view shares, ``sentences`` the
text, ``console`` the terminal and ``--json``, ``html`` ``report.html``, ``svg`` the figures. Reads tables
only; knows nothing of MLflow."""
