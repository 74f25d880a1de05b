"""Settings of the demo project: scrapy-robotrules enabled the Scrapy way, as an add-on."""

BOT_NAME = "demo_project"

SPIDER_MODULES = ["demo_project.spiders"]
NEWSPIDER_MODULE = "demo_project.spiders"

# The crawler's product token, robotrules-demo, is what robots.txt groups are matched against.
USER_AGENT = "robotrules-demo/0.1 (scrapy-robotrules example project)"

# Obey robots.txt, with scrapy-robotrules in place of Scrapy's RobotsTxtMiddleware.
ROBOTSTXT_OBEY = True
ADDONS = {"scrapy_robotrules.Addon": 0}

# scrapy-robotrules settings, shown with their defaults:
# ROBOTRULES_PRECEDENCE = "most-specific"   # or "first-match", "allow-first";
#                                           # a spider's robotrules_precedence attribute
#                                           # wins, but -s ROBOTRULES_PRECEDENCE beats it
# ROBOTRULES_AGENT_MATCH = "token"          # or "substring" (the 1994 reading)
# ROBOTRULES_USER_AGENT = None              # None: ROBOTSTXT_USER_AGENT, then USER_AGENT
# ROBOTRULES_CRAWL_DELAY = True             # obey Crawl-delay
# ROBOTRULES_MAX_CRAWL_DELAY = 60.0         # seconds; a longer Crawl-delay is cut to this
# ROBOTRULES_RETRY_DELAY = 5.0              # seconds before an unreachable robots.txt is
#                                           # fetched again; doubles on each failure
# ROBOTRULES_UNREACHABLE_TIMEOUT = 300.0    # seconds requests wait for an unreachable
#                                           # robots.txt before they are dropped
# ROBOTRULES_UNAUTHORIZED = "allow"         # or "disallow": what a 401/403 robots.txt means
# ROBOTRULES_MAX_AGE = 86400.0              # seconds a fetched robots.txt stays fresh, at most
# ROBOTRULES_MAX_SIZE = 512000              # bytes of robots.txt read
# ROBOTRULES_CACHE_SIZE = 100000            # origins whose rules are kept
# ROBOTRULES_CONCURRENT_FETCHES = 64        # robots.txt downloads at once
# ROBOTRULES_STORE = "memory"               # or "sqlite:robots.db" (kept across restarts),
#                                           # "redis://host:6379/0" (shared by a fleet)

# The flaky origin answers 503 three times: fetch its robots.txt again after 1 s, not 5 s.
ROBOTRULES_RETRY_DELAY = 1

# Bounds for a real site (-a url=...): three links deep, at most 30 responses.
DEPTH_LIMIT = 3
CLOSESPIDER_PAGECOUNT = 30

# INFO shows the spider's "crawled"/"not crawled" lines, the summary and the stats.
LOG_LEVEL = "INFO"

# No listening ports or job files besides the local site.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

FEED_EXPORT_ENCODING = "utf-8"
