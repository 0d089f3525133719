"""What every section of the experiment config shares: the frozen model that refuses unknown keys, and the
located error and name checks that say which config key is at fault."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

from abcompare.core.naming import first_collision, name_problem


def located(message: str, *at: str) -> PydanticCustomError:
    """A validation error that names the config path it is about (``at``), so the loader can give the line
    of that key rather than of the section that holds it."""
    return PydanticCustomError("abcompare", "{message}", {"message": message, "at": at})


def check_name(kind: str, name: str, *at: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        raise located(f"{kind} name {name!r} {problem}", *at)


def check_distinct(kind: str, names: list[str], *at: str) -> None:
    """Two names that become one MLflow key (``a b`` / ``a_b``, ``A`` / ``a``) would overwrite each other."""
    clash = first_collision(names)
    if clash is not None:
        first, second = clash
        raise located(
            f"{kind} names {first!r} and {second!r} become the same MLflow key and file name; rename one",
            *at,
            second,
        )


class Model(BaseModel):
    """A config section: unknown keys refused, immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)
