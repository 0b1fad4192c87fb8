"""Read-only checks of books against their files: quotations, page images, per-book health."""
