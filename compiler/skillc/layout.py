"""What a skillc bundle is, as its writer (``emit``) and its readers (``bundle``, ``sources.http``)
both need it: the manifest's kind and format versions.  A reader refuses a version newer than the
one written here, so the two can never disagree about what "newest" means."""

from __future__ import annotations

MANIFEST_KIND = "skillc-bundle"  # api/manifest.json's "kind"
MANIFEST_VERSION = 1  # api/manifest.json's "manifest_version"
SELECT_VERSION = 1  # api/index/select.json's "version"
MANIFEST = "api/manifest.json"  # every published file, its digest and size
# Claude Code plugin manifests, found by discovery and checked by lint (skillc.validate.manifests)
MANIFEST_DIR = ".claude-plugin"
MARKETPLACE = "marketplace.json"
PLUGIN = "plugin.json"
MANIFEST_NAMES = (MARKETPLACE, PLUGIN)
WORK_DIR = ".skillc-build"  # beside the output: staging, previous generation, lock, the site's kept state
# The bundle's top-level names every emitter but the docs site writes below; the site writes only
# other names (it refuses these).  So the build can list, compress and gate these while the site is built.
BUNDLE_TOPS = frozenset({"api", ".well-known", "_routing", "_redirects", "_headers"})

__all__ = ["MANIFEST_KIND", "MANIFEST_VERSION", "SELECT_VERSION", "WORK_DIR", "MANIFEST", "MANIFEST_DIR",
           "MARKETPLACE", "PLUGIN", "MANIFEST_NAMES", "BUNDLE_TOPS"]
