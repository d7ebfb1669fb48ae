"""The Python twin of numba's inlining: a loop recompiled from its own source with the bodies of
the small functions it calls copied in.

A function marked `jitable(inline=True)` (schedulers.jit) is copied by numba into every compiled
loop that calls it. The Python loops of schedulers.fastpath call the same functions (a policy's key
function, its preemption rule), and a Python call costs about as much as the arithmetic it wraps: at
every arrival while a job runs, srpt's loop called its key for `size[j] - attained`. `inline_calls`
gives the loop those bodies too, from the one source: it parses the loop's source, replaces each
call of a function marked inline by the function's body, and compiles the result in the loop's own
namespace. Nothing is written twice, and the copy performs the same operations in the same order as
the call (the arguments first, left to right, then the body), so its runs are identical, bit for bit.

A body is copied only where that is plainly so: the function's body is assignments to plain local
names followed by one `return`, and reads nothing but its parameters, its locals and constants. In
an assignment `x = f(...)` its arguments that are not names or constants are bound to fresh names
first, its locals renamed; inside an expression (`if prefer(a, b, c, d):`), only a one-line body
called on names and constants is copied. Any other call stays a call. May import the standard
library and schedulers.jit.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap

from schedulers import jit


class _Body:
    """A function that can be copied into a caller: its parameters, its statements before the
    `return` (assignments to its own names) and the returned expression."""

    def __init__(self, function):
        tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise _NotInlinable
        self.name = function.__name__
        self.params = [a.arg for a in args.args]
        body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise _NotInlinable
        self.statements, self.result = body[:-1], body[-1].value
        self.locals = []
        for statement in self.statements:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                raise _NotInlinable
            self.locals.append(statement.targets[0].id)
        if set(self.locals) & set(self.params):
            raise _NotInlinable
        known = set(self.params) | set(self.locals)
        for node in body:
            for name in ast.walk(node):
                if isinstance(name, ast.Name) and (name.id not in known or isinstance(name.ctx, ast.Del)):
                    raise _NotInlinable  # a global, a builtin or a deletion: left as a call
                if isinstance(name, (ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await,
                                     ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                    raise _NotInlinable

    def copy_into(self, args: list, prefix: str) -> tuple[list, ast.expr]:
        """(statements, expression): this body with parameter k read as `args[k]` (names or
        constants) and its locals renamed with `prefix`."""
        names = dict(zip(self.params, args, strict=True))
        names.update({local: ast.Name(prefix + local, ast.Load()) for local in self.locals})

        class Rename(ast.NodeTransformer):
            def visit_Name(self, node):
                new = names[node.id]
                if isinstance(node.ctx, ast.Store):
                    return ast.copy_location(ast.Name(new.id, ast.Store()), node)
                return ast.copy_location(copy.deepcopy(new), node)

        statements = [Rename().visit(copy.deepcopy(s)) for s in self.statements]
        return statements, Rename().visit(copy.deepcopy(self.result))


class _NotInlinable(Exception):
    """A function whose body `inline_calls` does not copy (it stays a call)."""


def _simple(node) -> bool:
    return isinstance(node, (ast.Name, ast.Constant))


class _Inliner(ast.NodeTransformer):
    """Replaces the calls of `bodies` ({name in the loop: _Body}) in a function's tree."""

    def __init__(self, bodies: dict):
        self.bodies = bodies
        self.count = 0
        self.copied = 0

    def _body_of(self, node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            body = self.bodies.get(node.func.id)
            if body is not None and len(node.args) == len(body.params) \
                    and not any(isinstance(a, ast.Starred) for a in node.args):
                return body
        return None

    def _prefix(self, body) -> str:
        self.count += 1
        return f"_{body.name}_{self.count}_"

    def visit_Assign(self, node):
        body = self._body_of(node.value)
        if body is None or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return self.generic_visit(node)
        prefix = self._prefix(body)
        bound, args = [], []
        for param, arg in zip(body.params, node.value.args, strict=True):
            if _simple(arg):
                args.append(arg)
            else:  # evaluated once, in argument order, before the body
                bound.append(ast.Assign([ast.Name(prefix + param, ast.Store())], self.visit(arg)))
                args.append(ast.Name(prefix + param, ast.Load()))
        statements, result = body.copy_into(args, prefix)
        node.value = result
        self.copied += 1
        return [ast.copy_location(s, node) for s in bound + statements] + [node]

    def visit_Call(self, node):
        body = self._body_of(node)
        if body is None or body.statements or not all(_simple(a) for a in node.args):
            return self.generic_visit(node)
        self.copied += 1
        return ast.copy_location(body.copy_into(list(node.args), self._prefix(body))[1], node)


def inlined(function) -> bool:
    """Whether `function` is marked to be copied into its callers (`jitable(inline=True)`)."""
    entry = jit._JITABLE.get(id(function))
    return entry is not None and entry[0] is function and entry[1]


def inline_calls(loop):
    """`loop` (a plain Python function, possibly a closure) compiled anew from its source with the
    calls of the functions marked inline that it reaches by name (closure cells, then its globals)
    replaced by their bodies; `loop` itself if it calls none that can be copied."""
    free = dict(zip(loop.__code__.co_freevars, (c.cell_contents for c in loop.__closure__ or ()), strict=True))
    scope = {**loop.__globals__, **free}
    source = textwrap.dedent(inspect.getsource(loop))
    tree = ast.parse(source)
    function = tree.body[0]
    bodies = {}
    for name in {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}:
        target = scope.get(name)
        if callable(target) and inlined(target):
            try:
                bodies[name] = _Body(target)
            except (_NotInlinable, OSError, TypeError):
                pass  # stays a call
    inliner = _Inliner(bodies)
    function.decorator_list = []
    inliner.visit(function)
    if not inliner.copied:
        return loop
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, loop.__code__.co_firstlineno - 1)
    namespace = dict(scope)
    exec(compile(tree, inspect.getsourcefile(loop), "exec"), namespace)  # noqa: S102 (the loop's own source)
    made = namespace[function.name]
    made.__qualname__ = loop.__qualname__
    made.__doc__ = loop.__doc__
    return made
