"""All tables. A module is loaded when one of its names is first read, so that a command
needing two tables does not declare (and configure the mappers of) thirty: the names are in
__init__.pyi, read by lazy_loader. `load_all` registers every table on `Base.metadata`, for
what compares the models with the database (Alembic)."""

import lazy_loader

__getattr__, __dir__, _names = lazy_loader.attach_stub(__name__, __file__)
__all__ = [*_names, "load_all"]


def load_all() -> None:
    for name in _names:
        __getattr__(name)
