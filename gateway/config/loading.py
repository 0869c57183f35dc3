"""Reading a config file, with every mistake told as one line naming the file, the line and the field.

PyYAML's node tree keeps where each key and value starts, so a pydantic error's location (a path of keys
and indexes) can be turned back into the line an operator has to fix.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import AliasChoices, BaseModel, ValidationError

Location = tuple[str | int, ...]


class ConfigError(ValueError):
    """A mistake in a config file; its text is the whole message, on one line."""


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    root: yaml.MappingNode  # where each key and value starts
    data: dict[str, Any]

    def check_known_keys(self, model: type[BaseModel]) -> None:
        """ConfigError at the first key that no setting has, at any depth: pydantic drops unknown keys of a
        nested section silently, and a misspelt limit that does nothing is worse than a refusal."""
        for location in unknown_keys(self.data, model, ()):
            raise ConfigError(f"{self.where(location)}: {field_name(location)}: unknown setting")

    def validation_error(self, exc: ValidationError) -> ConfigError:
        """The first of pydantic's errors as one line, and how many more there are."""
        errors = exc.errors(include_url=False)
        location = tuple(errors[0]["loc"])
        field = f"{field_name(location)}: " if location else ""
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return ConfigError(f"{self.where(location)}: {field}{errors[0]['msg']}{more}")

    def where(self, location: Location) -> str:
        """`file:line` of the deepest node of the location that the file has (a missing field: its section)."""
        node: yaml.Node = self.root
        for depth, part in enumerate(location):
            child = _child(node, part, key=depth == len(location) - 1)
            if child is None:
                break
            node = child
        return f"{self.path}:{node.start_mark.line + 1}"


def read_config(path: Path) -> ConfigFile:
    """The file's settings; ConfigError if it is missing, unreadable, not YAML, empty or not a mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> ConfigFile:
    """read_config's checks on text already read (`path` names where it came from in the messages)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if root is None or (isinstance(root, yaml.MappingNode) and not root.value):
        raise ConfigError(f"{path}: the config is empty (start from gateway/default.yaml or deploy/cachegate.yaml)")
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{path}:{root.start_mark.line + 1}: the config must be a mapping of settings")
    return ConfigFile(path, root, yaml.safe_load(text))


def field_name(location: Location) -> str:
    """('tenants', 0, 'keys') -> 'tenants[0].keys'."""
    name = ""
    for part in location:
        name += f"[{part}]" if isinstance(part, int) else f".{part}" if name else str(part)
    return name


def _child(node: yaml.Node, part: str | int, *, key: bool) -> yaml.Node | None:
    """The value under a mapping key or at a sequence index; for the last part of a location, the key's own
    node (a block mapping's value starts on the line after its key)."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            if key_node.value == str(part):
                return key_node if key else value
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        child: yaml.Node = node.value[part]
        return child
    return None


def unknown_keys(data: Any, annotation: Any, location: Location) -> Iterator[Location]:
    """Locations of the mapping keys in `data` that the type `annotation` has no field for."""
    for model in _models_in(annotation):
        if isinstance(data, dict) and model.model_config.get("extra") != "allow":
            fields = {name: info.annotation for name, info in model.model_fields.items()}
            accepted = {**fields, **{alias: fields[name] for name, alias in _aliases(model)}}
            for key, value in data.items():
                if key not in accepted:
                    yield (*location, key)
                else:
                    yield from unknown_keys(value, accepted[key], (*location, key))
            return
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple, set, frozenset) and args and isinstance(data, list):
        for index, item in enumerate(data):
            yield from unknown_keys(item, args[0], (*location, index))
    elif origin is dict and len(args) == 2 and isinstance(data, dict):
        for key, value in data.items():
            yield from unknown_keys(value, args[1], (*location, key))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a field's type names directly or in a union (`X | None`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        return [model for arg in get_args(annotation) for model in _models_in(arg)]
    return []


def _aliases(model: type[BaseModel]) -> Iterator[tuple[str, str]]:
    for name, info in model.model_fields.items():
        if info.alias:
            yield name, info.alias
        choices = info.validation_alias.choices if isinstance(info.validation_alias, AliasChoices) else []
        for choice in [info.validation_alias, *choices]:
            if isinstance(choice, str):
                yield name, choice
