"""One class describes a JSON-RPC method, whether the console or the memory panel defines it."""

from __future__ import annotations

import pytest

from memory_panel.api import all_methods
from memory_panel.api.method import ApiMethod
from mobkit_console.rpc.registry import method_get, method_names, register_methods


def test_every_registered_method_is_the_one_method_class():
    names = method_names()
    assert {"mobkit/capabilities", "mobkit/access/status"} <= set(names)
    assert all(type(method_get(name)) is ApiMethod for name in names)
    assert {method.name: method for method in all_methods()}.items() <= {n: method_get(n) for n in names}.items()


def test_a_method_registered_twice_is_refused():
    with pytest.raises(ValueError, match="registered twice: mobkit/capabilities"):
        register_methods([method_get("mobkit/capabilities")])
