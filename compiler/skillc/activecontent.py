"""File names a browser opens as a document that can run script, on a host that types files by
their extension and sends no other header (GitHub Pages, S3, ``python -m http.server``).

Such a host serves ``x.html`` as ``text/html``, ``x.svg`` as ``image/svg+xml`` and ``x.xml`` (or
any ``+xml`` type) as XML, whose XHTML ``<script>`` elements run: opened from the docs site, a
skill's own file would run its script in the site's origin.  No header can be relied on there
(``skillc serve`` and the routing configs send a sandboxing policy; a plain host does not), so the
bundle never publishes a skill's file under such a name outside its zip (downloaded, never
rendered), and a skill ID whose file name would end so (``api/skills/<id>``) is refused.

``ACTIVE_SUFFIXES``: every extension that Python's ``mimetypes`` (what ``http.server`` uses) or
Debian's ``/etc/mime.types`` (what nginx, Apache and most hosts' tables follow) map to
``text/html``, ``text/xml``, ``application/xml`` or a ``+xml`` type, and the web archive formats;
fixed here so the bundle does not depend on the build machine's tables.
"""

from __future__ import annotations

ACTIVE_SUFFIXES = frozenset("""
    1km apxml atom atomcat atomdeleted atomsrv atomsvc bmml ccmp ccxml cdxml cellml cl clue cpl csl dae
    davmount dd2 ddf dist distz dwd emma emotionml es3 et3 fdt fo gml grxml gsheet hal held htm html ink
    inkml irp its kml lasxml lbe lgr link66 lostsyncxml lostxml mads maei meta4 mets mht mhtml mml mods
    moml mpd mpkg mrcx musd mxml obgx odd opf osm pkg provx pskcxml rapd rdf relo rfcxml rif rl rld rs
    rsat rsheet rss rusd scl sdkd sdkm senmlx sensmlx shf shtm shtml sls smi smil sml sru srx ssml stpx
    svg svgz swidtag td tei teicorpus tfi ttml uis uo uoml uvt uvvt vxml wadl wbs wif wsdl wspolicy x3d
    x3dz xav xca xcs xdf xdm xdp xdssc xel xer xht xhtm xhtml xhvml xlf xml xmls xns xop xpdl xsd xsf
    xsl xslt xsm xspf xul xvm xvml yin zaz zmm
""".split())

REASON = ("a page or image that would run script in the site's origin on a static host that types files by "
          "extension; published in the skill's zip only")


def runs_as_document(name: str) -> bool:
    """``name`` (a path or file name) ends with an extension a browser opens as HTML, SVG or XML."""
    base = name.rsplit("/", 1)[-1]
    return "." in base and base.rsplit(".", 1)[1].lower() in ACTIVE_SUFFIXES
