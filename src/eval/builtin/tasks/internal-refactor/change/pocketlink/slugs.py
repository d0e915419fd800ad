"""Generated slugs: random letters and digits."""

import secrets
import string

ALPHABET = string.ascii_letters + string.digits


def random_slug(length):
    return "".join(secrets.choice(ALPHABET) for _ in range(length))
