"""Pages render whether or not `collectstatic` has run; the README's steps run it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mobkit_console import settings as production
from tests.support.clients import user_with_subject
from tests.support.postures import USER

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.django_db
def test_pages_render_with_the_production_storage_before_collectstatic(client, world, settings, tmp_path):
    settings.STORAGES = production.STORAGES
    settings.STATIC_ROOT = tmp_path / "never-collected"
    settings.STATIC_ROOT.mkdir()  # there, but `collectstatic` never wrote a manifest into it
    client.force_login(user_with_subject(USER))
    for path in ("/console/", "/console/memory/", "/console/memory/records/"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert re.search(r'href="/static/[^"]+\.css"', page.content.decode()), path


def test_the_readme_steps_for_a_real_mobkit_collect_static_files_before_serving():
    section = README.read_text().split("### Pointing it at a real MobKit", 1)[1].split("\n### ", 1)[0]
    steps = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [line.split("manage.py", 1)[1].split()[0] for line in steps.splitlines() if "manage.py" in line]
    assert "collectstatic" in commands
    assert commands.index("collectstatic") < commands.index("runserver")
