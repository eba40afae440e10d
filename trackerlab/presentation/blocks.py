"""The user's structure on a tape: the ``tl.scope`` blocks its operations were recorded in (``%%track`` opens them
for the cell's statements and functions), as a tree of ``Block`` records that the displays fold by: the drawing
draws a block as one box, the repr's tape as one ``<details>``."""

from __future__ import annotations

from .numbering import numbering

__all__ = ["Block", "blocks"]


class Block:
    """One block of a tape as the displays fold it.

    ``name`` is the block's name (``"layer 1"``; ``"h › dense"`` for a block that holds nothing but one
    block, the two read as one); ``nodes`` every operation recorded inside it, its nested blocks' included,
    in forward order; ``own`` those outside its nested blocks; ``blocks`` its blocks one level down;
    ``inputs`` the values from outside it that its operations use (parameters, or values computed before it),
    ``outputs`` its values used outside it or the tape's output, both in forward order; ``parent`` the block
    it is in (``None`` at the top).
    """

    __slots__ = ("blocks", "inputs", "name", "nodes", "outputs", "own", "parent", "parts")

    def __init__(self, name: str, parent):
        self.name = name
        self.parts = (name,)  # the names of the blocks read as this one, outermost first
        self.parent = parent
        self.nodes: list = []
        self.own: list = []
        self.blocks: list = []
        self.inputs: tuple = ()
        self.outputs: tuple = ()

    @property
    def operations(self) -> int:
        """How many operations were recorded inside the block, its nested blocks' included."""
        return len(self.nodes)

    def chain(self) -> list:
        """The blocks this one is in, outermost first, and itself."""
        out, block = [], self
        while block is not None:
            out.append(block)
            block = block.parent
        return out[::-1]

    def __repr__(self) -> str:
        return f"<Block {self.name!r}: {self.operations} operations, {len(self.blocks)} blocks inside>"


def blocks(root, index: dict | None = None, below: dict | None = None) -> list[Block]:
    """The outermost blocks of the tape of ``root`` (a ``Tracked`` node), each holding its nested ones.

    Two entries into blocks of one name (two calls of a ``@tl.scope`` function) are two blocks. As the
    displays show them: a block holding nothing but one nested block is read as one block (``"h › dense"``;
    ``"dense"`` when both have that name), and a block of a single operation is not a block (folding it would
    hide nothing). ``index`` and ``below`` are ``numbering(root)``'s, when the caller has them.

    >>> import trackerlab as tl
    >>> W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    >>> with tl.scope("layer 1"):
    ...     h = tl.tanh(W @ [1.0, 1.0])
    >>> [(b.name, b.operations) for b in blocks((h * 2).tracker)]
    [('layer 1', 2)]
    """
    if index is None or below is None:
        index, _, below = numbering(root)
    found: dict = {}  # (outer key, id of the name object) → Block: each entry into a block has its own name object
    top: list = []
    for node in index:
        scope = getattr(node, "scope", ())
        if not scope or node.isleaf:
            continue
        block, key = None, ()
        for name in scope:
            key = (key, id(name))
            inner = found.get(key)
            if inner is None:
                inner = found[key] = Block(str(name), block)
                (block.blocks if block is not None else top).append(inner)
            inner.nodes.append(node)
            block = inner
        block.own.append(node)
    top = _simplified(top, None)
    order = index.__getitem__
    users: dict = {}
    for node, args in below.items():
        for arg in args:
            users.setdefault(arg, []).append(node)
    stack = list(top)
    while stack:
        block = stack.pop()
        stack.extend(block.blocks)
        block.own.sort(key=order)
        inside = set(block.nodes)
        inputs = {arg for node in block.nodes for arg in below[node] if arg not in inside}
        block.inputs = tuple(sorted(inputs, key=order))
        block.outputs = tuple(
            node for node in block.nodes if node is root or any(user not in inside for user in users.get(node, ()))
        )
    return top


def _simplified(level: list, parent) -> list:
    """``level``'s blocks as displays show them: one holding only one block is read with it as one, and one of
    a single operation is dissolved into ``parent`` (its operation becomes the parent's own)."""
    out = []
    for block in level:
        while not block.own and len(block.blocks) == 1:  # nothing but one block inside: the two are one
            inner = block.blocks[0]
            repeated = inner.parts[0] == block.parts[-1]  # a @tl.scope function that %%track makes a block too
            inner.parts = block.parts + inner.parts[repeated:]
            inner.name = " › ".join(inner.parts)
            block = inner
        block.parent = parent
        block.blocks = _simplified(block.blocks, block)
        if block.operations == 1:
            if parent is not None:
                parent.own.extend(block.nodes)  # forward order again below
            continue
        out.append(block)
    return out
