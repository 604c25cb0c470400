"""Engine elements created many at a time.

A fastscale stack has hundreds of elements (grouping constructs, resources, data sources), and every call from
Python to the engine's node process costs about a millisecond. So elements of the resource layer are not
created in the engine when Python creates them: they wait in their stack, and one call to the node library
`fastscale-elements` (node/elements, shipped in `stacks/_jsii`) creates all that are waiting, in the order
they were made, with the engine's own classes. The result is the same construct tree, so the same paths,
logical ids and JSON, as one `jsii.create` per element.

The waiting elements are created the first time the engine needs any element of the stack, or the stack
itself: jsii reads `__jsii_ref__` of every object it sends to node, and here that read first creates what is
waiting. So nothing ever reaches node ahead of an element made before it, and an engine call on a waiting
element (`node.path`, `add_override` ...) simply creates it first. Elements still waiting when the app is
synthesized (the app, not the stack, is what Python sends then) are created by node's call back to the stack
before it prepares the stack (`ElementSource.createWaiting`). An engine error while creating them (a
duplicate construct id, say) is raised by the Python call that triggered the creation.

The attributes take the same way back: each time the engine renders the stack it calls the stack's Python
side once, for every element's attributes as one JSON text (`ElementSource.attributesJson`).

This relies on three things of jsii's Python runtime (pinned in pyproject.toml, and exercised by every stack
test): objects are sent to node by their `__jsii_ref__`, a new object is registered by `_reference_map`, and
classes created by `JSIIMeta` register every instance right after `__init__` (which `DeferredMeta` skips).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

import jsii
from jsii._reference_map import register_reference

ASSEMBLY = jsii.JSIIAssembly.load("fastscale-elements", "1.0.0", "fastscale.stacks", "fastscale-elements-1.0.0.tgz")


class _ElementBatch(metaclass=jsii.JSIIMeta, jsii_type="fastscale-elements.ElementBatch"):
    """The node class (node/elements/lib/index.ts): only static methods."""


class _ElementSource(metaclass=jsii.JSIIAbstractClass, jsii_type="fastscale-elements.ElementSource"):
    """The node class a stack's Python side implements: node calls it back before it prepares the stack for
    synthesis (to create the waiting elements) and each time it renders it (for the attributes, as one JSON text)."""

    def __init__(self) -> None:
        jsii.create(self.__class__, self, [])

    @jsii.member(jsii_name="createWaiting")
    @abc.abstractmethod
    def create_waiting(self) -> None: ...

    @jsii.member(jsii_name="attributesJson")
    @abc.abstractmethod
    def attributes_json(self) -> str: ...


class _StackSource(_ElementSource):
    def __init__(self, stack: WaitingRoom, attributes: Callable[[], str]) -> None:
        super().__init__()
        self._stack, self._attributes = stack, attributes

    def create_waiting(self) -> None:
        self._stack.create_waiting()

    def attributes_json(self) -> str:
        return self._attributes()


#: What node is told per element: [parent, id, kind, Terraform type, provider, output config]; the parent is
#: an element or stack that exists in the engine, or the index of one created earlier in the same call.
Spec = list[Any]


class DeferredMeta(jsii.JSIIMeta):
    """Metaclass of the deferred elements: jsii's own registers each new instance with its engine reference
    right after `__init__`, which a waiting element does not have yet (it is registered when created)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return type.__call__(cls, *args, **kwargs)


class Deferred:
    """Mixin of the resource layer's element classes (before the engine class in the bases, `DeferredMeta` as
    metaclass). Their `__init__` calls `defer` instead of the engine class's constructor."""

    KIND: ClassVar[str]  # "group" | "resource" | "data" | "output": what node creates
    _engine_ref: Any = None
    _owner: WaitingRoom
    _scope: Any
    _id: str

    def defer(self, owner: WaitingRoom, scope: Any, id_: str) -> None:
        """Wait in `owner` (the stack) to be created in the engine as child `id_` of `scope`."""
        self._owner, self._scope, self._id = owner, scope, id_
        owner.wait(self)

    def engine_spec(self, position: dict[int, int]) -> Spec:
        """What node needs to create the element; `position` gives the index of each element of the same call."""
        return [position.get(id(self._scope), self._scope), self._id, self.KIND, *self.engine_config()]

    def engine_config(self) -> list[Any]:
        """[Terraform type, provider, output config] (None where it does not apply)."""
        return [None, None, None]

    @property
    def __jsii_ref__(self) -> Any:
        self._owner.create_waiting()  # everything made before this element first
        if self._engine_ref is None:
            raise RuntimeError(f"{type(self).__name__} was never created in the engine")
        return self._engine_ref

    @__jsii_ref__.setter
    def __jsii_ref__(self, ref: Any) -> None:
        self._engine_ref = ref


class WaitingRoom:
    """Mixin of a stack whose deferred elements wait to be created in one engine call, and whose resources'
    attributes the engine asks for, as one JSON text, each time it renders the stack."""

    _waiting: list[Deferred]

    def attach_to_engine(self, attributes: Callable[[], str]) -> None:
        """Called once the stack exists in the engine: from then on the engine creates the waiting elements
        before it prepares the stack for synthesis, and adds what `attributes` returns (a JSON array of
        `[section, type, logical id, attributes]`) to the stack's document whenever it renders it."""
        jsii.sinvoke(_ElementBatch, "attachSource", [self, _StackSource(self, attributes)])

    def wait(self, element: Deferred) -> None:
        self._waiting.append(element)

    def create_waiting(self) -> None:
        """Create every waiting element in the engine, in one call, in the order they were made."""
        waiting = getattr(self, "_waiting", None)  # none yet while the stack itself is being created
        if not waiting:
            return
        self._waiting = []  # before the call: sending the stack to node reads its reference, which comes here
        position = {id(element): i for i, element in enumerate(waiting)}
        specs = [element.engine_spec(position) for element in waiting]
        made = jsii.sinvoke(_ElementBatch, "create", [self, specs])
        for element, engine_side in zip(waiting, made, strict=True):
            element._engine_ref = engine_side.__jsii_ref__
            register_reference(element)
