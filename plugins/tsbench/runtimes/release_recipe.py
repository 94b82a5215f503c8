"""A local recipe at another release of its server than the pin (a run's ``versions``).

A recipe class (``runtimes.local.ServerRecipe``) carries its server definition as a class attribute;
``recipe_at_release`` makes, once per version, the subclass whose definition is
``definition.at_release(version)``: its install recipe gets that version and its paths name it. The
subclass has the pinned recipe's module and name, so an instance's state records the pinned class
(``pinned_recipe``) and the version (``recipe_release``); ``attach`` in another process makes the
same subclass again from both.
"""

from __future__ import annotations

import functools

from tsbench.runtimes.contract import TargetError

RELEASE_OF = "release_of"  # the attribute naming a release's recipe's pinned recipe


def recipe_at_release(recipe: type, version: str) -> type:
    """``recipe`` (or the pinned recipe of a release's) installing and running ``version``."""
    return _at_release(pinned_recipe(recipe), version)


@functools.cache
def _at_release(recipe: type, version: str) -> type:
    definition = getattr(recipe, "definition", None)
    if definition is None:
        raise TargetError(f"{recipe.__name__}: the server recipe names no definition, so no release either")
    body = {"definition": definition.at_release(version), RELEASE_OF: recipe, "__module__": recipe.__module__}
    return type(recipe.__name__, (recipe,), {**body, "__qualname__": recipe.__qualname__})


def pinned_recipe(recipe: type) -> type:
    """The recipe of the pinned version: ``recipe`` itself unless it is a release's."""
    return recipe.__dict__.get(RELEASE_OF) or recipe


def recipe_release(recipe: type) -> str:
    """The version a run chose for ``recipe`` ("" for the pinned one)."""
    definition = getattr(recipe, "definition", None)
    return definition.release if definition is not None else ""
