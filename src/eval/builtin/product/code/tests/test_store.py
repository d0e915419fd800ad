import pytest

from pocketlink.store import SlugTaken, Store


@pytest.fixture
def store(tmp_path):
    return Store(str(tmp_path / "links.json"))


def test_generated_slugs_have_the_configured_length(tmp_path):
    store = Store(str(tmp_path / "links.json"), slug_length=9)
    assert len(store.create("https://example.com")["slug"]) == 9


def test_a_custom_slug_is_used_once(store):
    store.create("https://example.com", "docs")
    with pytest.raises(SlugTaken):
        store.create("https://example.org", "docs")


def test_visits_are_counted_and_kept(tmp_path):
    path = str(tmp_path / "links.json")
    store = Store(path)
    slug = store.create("https://example.com")["slug"]
    store.visit(slug)
    store.visit(slug)
    assert Store(path).get(slug)["visits"] == 2
