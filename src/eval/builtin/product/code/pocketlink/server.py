"""The HTTP API: create, read and delete links, follow them, and count visits."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

from .store import SlugTaken

LINKS = "/api/links"


class Handler(BaseHTTPRequestHandler):
    store = None  # set by serve()

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/healthz":
            return self.send_json(200, {"status": "ok"})
        if path == "/api/stats":
            return self.send_json(200, self.store.stats())
        if path.startswith(LINKS + "/"):
            link = self.store.get(path[len(LINKS) + 1 :])
            return self.send_json(200, link) if link else self.send_problem(404, "no such link")
        link = self.store.visit(path.lstrip("/"))
        if link is None:
            return self.send_problem(404, "no such link")
        self.send_response(302)
        self.send_header("Location", link["url"])
        self.end_headers()

    def do_POST(self):
        if urlparse(self.path).path != LINKS:
            return self.send_problem(404, "not found")
        body = self.read_json()
        if not isinstance(body, dict):
            return self.send_problem(400, "the body must be a JSON object")
        url = body.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return self.send_problem(400, "url must be an http:// or https:// URL")
        try:
            link = self.store.create(url, body.get("slug"))
        except SlugTaken:
            return self.send_problem(409, "this slug is already taken")
        except ValueError as error:
            return self.send_problem(400, str(error))
        self.send_json(201, link)

    def do_DELETE(self):
        path = urlparse(self.path).path
        if not path.startswith(LINKS + "/"):
            return self.send_problem(404, "not found")
        if not self.store.delete(path[len(LINKS) + 1 :]):
            return self.send_problem(404, "no such link")
        self.send_response(204)
        self.end_headers()

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            return None

    def send_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_problem(self, status, message):
        self.send_json(status, {"error": message})


def serve(host, port, store):
    Handler.store = store
    server = ThreadingHTTPServer((host, port), Handler)
    print(f"pocketlink listening on http://{host}:{port}", flush=True)
    server.serve_forever()
