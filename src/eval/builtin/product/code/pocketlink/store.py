"""Where the links are kept: in memory, and in one JSON file rewritten on every change."""

import json
import os
import re
import secrets
import string
import threading
from datetime import datetime, timezone

ALPHABET = string.ascii_letters + string.digits
CUSTOM_SLUG = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class SlugTaken(Exception):
    """A link with this slug exists already."""


def now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Store:
    def __init__(self, path, slug_length=6):
        self.path = path
        self.slug_length = slug_length
        self.lock = threading.Lock()
        self.links = self._load()

    def create(self, url, slug=None):
        with self.lock:
            if slug is None:
                slug = self._new_slug()
            elif not isinstance(slug, str) or not CUSTOM_SLUG.match(slug):
                raise ValueError("a slug is 1 to 32 letters, digits, '-' or '_'")
            elif slug in self.links:
                raise SlugTaken(slug)
            link = {"slug": slug, "url": url, "created_at": now(), "visits": 0}
            self.links[slug] = link
            self._save()
            return link

    def get(self, slug):
        return self.links.get(slug)

    def visit(self, slug):
        with self.lock:
            link = self.links.get(slug)
            if link is not None:
                link["visits"] += 1
                self._save()
            return link

    def delete(self, slug):
        with self.lock:
            if self.links.pop(slug, None) is None:
                return False
            self._save()
            return True

    def stats(self):
        return {"links": len(self.links), "visits": sum(link["visits"] for link in self.links.values())}

    def _new_slug(self):
        while True:
            slug = "".join(secrets.choice(ALPHABET) for _ in range(self.slug_length))
            if slug not in self.links:
                return slug

    def _load(self):
        if not os.path.exists(self.path):
            return {}
        with open(self.path, encoding="utf-8") as file:
            return json.load(file)

    def _save(self):
        with open(self.path, "w", encoding="utf-8") as file:
            json.dump(self.links, file, indent=2)
