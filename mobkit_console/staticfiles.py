"""The console's static-file storage: hashed, compressed names once `collectstatic` has run."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ConsoleStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's manifest storage, except that a file the manifest does not list (no
    `collectstatic` yet, or a file added since) keeps its plain name, which WhiteNoise serves from
    the finders, instead of a ``ValueError`` that turns every page into a bare 500. Collected files
    keep their hashed names and far-future caching."""

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:  # "Missing staticfiles manifest entry": nothing collected to hash
            return name
