"""Every configuration file read: ``files.py`` (skills.toml / pyproject.toml, file and line in errors) and ``build.py`` (the build settings and repositories)."""
