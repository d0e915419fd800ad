"""The command line: `pocketlink serve [options]`."""

import argparse

from . import __version__
from .server import serve
from .store import Store

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_DATA_FILE = "pocketlink.json"
DEFAULT_SLUG_LENGTH = 6


def build_parser():
    parser = argparse.ArgumentParser(prog="pocketlink", description="A tiny self-hosted link shortener.")
    parser.add_argument("--version", action="version", version=f"pocketlink {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="run the HTTP server")
    run.add_argument("--host", default=DEFAULT_HOST, help="address to listen on")
    run.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")
    run.add_argument("--data-file", default=DEFAULT_DATA_FILE, help="JSON file the links are kept in")
    run.add_argument(
        "--slug-length", type=int, default=DEFAULT_SLUG_LENGTH, help="length of generated slugs (4 to 16)"
    )
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.slug_length < 4:
        parser.error("--slug-length must be at least 4")
    store = Store(args.data_file, slug_length=args.slug_length)
    serve(args.host, args.port, store)


if __name__ == "__main__":
    main()
