"""Views: altair charts and widgets. The only part of labkit that may import UI libraries."""
