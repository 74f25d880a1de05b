"""A Scrapy project that shows scrapy-robotrules at work; see ../README.rst."""
