"""The demo project's spiders."""
