"""A shell script as a tree: tree-sitter-bash's parse turned into the few records the
evaluator walks (``ci.shell.walker``), once per distinct text.

tree-sitter and its bash grammar are imported here, when the first script is read,
never at stagegate's start-up. The conversion is depth-limited: a construct nested
deeper than ``budget.MAX_DEPTH`` (``$(...)`` in ``$(...)``, ``if`` in ``if``) becomes an
``Unread`` statement, so the records, and every walk over them, stay shallow. A
top-level statement the grammar cannot parse is ``Unread`` too, and bash would stop
there with a syntax error: the walker reads no further.

GitHub substitutes ``${{ }}`` into the text before bash reads it; a value stagegate
keeps out of the text (an unknown piece, a placeholder) is written into it as
``MARK + index + MARK`` with a character the text has nowhere else, and comes back
here as a ``Gh`` word part.
"""

from __future__ import annotations

import functools
from typing import Any

from stagegate.ci.budget import MAX_DEPTH
from stagegate.ci.shell.nodes import (
    AndOr,
    Arith,
    ArithCommand,
    Assign,
    Block,
    Case,
    CaseItem,
    CFor,
    Command,
    Declare,
    Element,
    Expand,
    For,
    Function,
    Gh,
    Group,
    If,
    Lit,
    Loop,
    Node,
    Not,
    Opaque,
    Param,
    Part,
    Pipeline,
    Redirect,
    Redirected,
    Script,
    Subshell,
    Subst,
    Test,
    TestExpr,
    Unread,
    Word,
)

# --------------------------------------------------------------------------- parsing

MAX_TEXTS = 512
"""Parsed texts kept (a script is read in every matrix row and caller)."""


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=MAX_TEXTS)
def parse(text: str, mark: str = "") -> Script:
    """The script ``text`` (``${{ }}`` values kept out of it written with ``mark``)."""
    data = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    return Script(_Converter(data, mark).program(tree.root_node), mark)


class TooDeep(Exception):
    """A construct nested deeper than MAX_DEPTH: its statement is ``Unread``."""


_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_STATEMENT_SKIP = frozenset({";", "&", ";;", "\n", "comment", "heredoc_body", "do", "done"})
_ASSIGNING = frozenset({"variable_assignment", "for_statement", "c_style_for_statement"})


class _Converter:
    """tree-sitter nodes -> records, over the script's UTF-8 bytes."""

    def __init__(self, data: bytes, mark: str) -> None:
        self.data = data
        self.mark = mark
        self.depth = 0

    def text(self, node: Any) -> str:
        text = self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")
        lead = self.lead(node)
        return text[len(lead) :] if lead else text

    def lead(self, node: Any) -> str:
        """Blanks the grammar put inside a node's first token (``' ${'``): text before it."""
        if node.type not in ("expansion", "command_substitution") or not node.children:
            return ""
        first = node.children[0]
        token = self.data[first.start_byte : first.end_byte].decode("utf-8", "surrogatepass")
        stripped = token.lstrip()
        return token[: len(token) - len(stripped)] if stripped != token else ""

    def span(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "surrogatepass")

    # -- statements

    def program(self, root: Any) -> Block:
        """The top-level statements, up to the line of the first syntax error: bash runs
        a script's commands one by one and stops at the first it cannot parse."""
        stop = self.first_error(root) if root.has_error else len(self.data)
        items: list[Node] = []
        for child in root.children:
            if child.type in _STATEMENT_SKIP or not child.is_named:
                continue
            if child.end_byte > stop or child.type == "ERROR":
                rest = self.span(child.start_byte, len(self.data))
                made = self.unread(child, "a syntax error: bash stops here", fatal=True)
                items.append(Unread(made.line, rest, made.reason, made.assigned, True))
                break
            try:
                items.append(self.statement(child))
            except TooDeep:
                items.append(
                    self.unread(child, f"shell constructs nested more than {MAX_DEPTH} deep")
                )
        return Block(tuple(items))

    def first_error(self, root: Any) -> int:
        """Where the line of the first error or missing token the grammar found starts
        (an iterative walk: the tree may be deep)."""
        first = len(self.data)
        cursor = root.walk()
        while True:
            node = cursor.node
            if node.type == "ERROR" or node.is_missing:
                first = min(first, node.start_byte)
            elif node.has_error and cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return self.data.rfind(b"\n", 0, first) + 1

    def unread(self, node: Any, reason: str, *, fatal: bool = False) -> Unread:
        """``node`` as an ``Unread``, with the variables it may assign (an iterative walk:
        the node may be nested arbitrarily deep)."""
        names: list[str] = []
        cursor = node.walk()
        while True:
            current = cursor.node
            if current.type in _ASSIGNING:
                target = current.child_by_field_name("name") or current.child_by_field_name(
                    "variable"
                )
                if target is not None and self.text(target) not in names:
                    names.append(self.text(target))
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return Unread(
                        node.start_point.row, self.text(node), reason, tuple(names), fatal
                    )

    def block(self, nodes: list[Any]) -> Block:
        return Block(
            tuple(self.statement(n) for n in nodes if n.is_named and n.type not in _STATEMENT_SKIP)
        )

    def statement(self, node: Any) -> Node:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            method = _STATEMENTS.get(node.type)
            if method is None:
                return self.unread(node, f"a {node.type.replace('_', ' ')} stagegate does not read")
            made: Node = method(self, node)
            return made
        finally:
            self.depth -= 1

    def command(self, node: Any) -> Node:
        assigns: list[Assign] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        for i, child in enumerate(node.children):
            kind = child.type
            if kind == "variable_assignment" and not words:
                assigns.append(self.assignment(child))
            elif kind in _REDIRECTS:
                redirects += self.redirects(child)
            elif kind == "command_name":
                words.append(self.word(child.children[0]) if child.children else self.empty())
            elif (
                child.is_named
                and node.field_name_for_child(i) in ("argument", None)
                and kind != "comment"
            ):
                words.append(self.word(child))
        return Command(node.start_point.row, tuple(assigns), tuple(words), tuple(redirects))

    def empty(self) -> Word:
        return Word((), "")

    def assignment(self, node: Any) -> Assign:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        written = self.text(name) if name is not None else ""
        append = any(c.type == "+=" for c in node.children)
        if name is not None and name.type == "subscript":
            array = name.child_by_field_name("name")
            index = name.child_by_field_name("index")
            if array is None or index is None or (value is not None and value.type == "array"):
                return Assign(written, None, append)
            word = self.word(value) if value is not None else self.empty()
            return Assign(self.text(array), word, append, self.text(index))
        if name is None:
            return Assign(written, None, append)
        if value is not None and value.type == "array":
            elements = [c for c in value.children if c.is_named and c.type != "comment"]
            if any(_keyed(self.text(c)) for c in elements):  # ``([k]=v)``: not computed
                return Assign(written, None, append)
            return Assign(written, None, append, None, tuple(self.word(c) for c in elements))
        return Assign(written, self.word(value) if value is not None else self.empty(), append)

    def variable_assignment(self, node: Any) -> Node:
        return Command(node.start_point.row, (self.assignment(node),), (), ())

    def variable_assignments(self, node: Any) -> Node:
        assigns = tuple(self.assignment(c) for c in node.named_children)
        return Command(node.start_point.row, assigns, (), ())

    def declaration(self, node: Any) -> Node:
        keyword = self.text(node.children[0])
        items: list[Assign | Word] = []
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                items.append(self.assignment(child))
            elif child.is_named:
                items.append(self.word(child))
        return Declare(node.start_point.row, keyword, tuple(items))

    def unset(self, node: Any) -> Node:
        words = [self.word(c) for c in node.children if c.is_named]
        return Command(
            node.start_point.row, (), (Word((Lit("unset", False),), "unset"), *words), ()
        )

    def redirects(self, node: Any) -> list[Redirect]:
        """A redirection; a here-document's with those written after its delimiter."""
        if node.type != "heredoc_redirect":
            return [self.redirect(node)]
        inner = [self.redirect(c) for c in node.children if c.type in _REDIRECTS]
        return [self.heredoc(node), *inner]

    def redirect(self, node: Any) -> Redirect:
        fd = ""
        op = ""
        target: Word | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named:
                op += self.text(child)
            elif target is None:
                target = self.word(child)
            else:
                target = Word((*target.parts, Lit(" ", True), *self.word(child).parts), "")
        return Redirect(op, target, fd)

    def heredoc(self, node: Any) -> Redirect:
        """``<<EOF`` (its body expanded) or ``<<'EOF'`` (literal); ``<<-`` strips tabs."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        strip = any(c.type == "<<-" for c in node.children)
        literal = start is not None and any(q in self.text(start) for q in "'\"\\")
        if body is None:
            return Redirect("<<", Word((), ""))
        stop = body.end_byte
        for child in body.children:
            if child.type == "heredoc_end":
                stop = child.start_byte
        if literal:
            text = self.span(body.start_byte, stop)
            parts: tuple[Part, ...] = (Lit(_strip_tabs(text) if strip else text, True),)
        else:
            parts = self.heredoc_parts(body, stop, strip)
        return Redirect("<<", Word(self.marked(parts), self.span(body.start_byte, stop)))

    def heredoc_parts(self, body: Any, stop: int, strip: bool) -> tuple[Part, ...]:
        parts: list[Part] = []
        pos = body.start_byte
        for child in body.children:
            if child.type in ("heredoc_content", "heredoc_end"):
                continue
            if child.start_byte > pos:
                parts.append(Lit(_heredoc_text(self.span(pos, child.start_byte)), True))
            parts += self.parts(child, quoted=True)
            pos = child.end_byte
        if stop > pos:
            parts.append(Lit(_heredoc_text(self.span(pos, stop)), True))
        if strip:  # the tabs at the start of each line, wherever a line starts
            at_start = True
            for i, part in enumerate(parts):
                if isinstance(part, Lit):
                    text = _strip_tabs(part.text) if at_start else part.text
                    if not at_start and "\n" in text:
                        head, _, tail = text.partition("\n")
                        text = head + "\n" + _strip_tabs(tail)
                    parts[i] = Lit(text, True)
                    at_start = text.endswith("\n")
                else:
                    at_start = False
        return tuple(parts)

    def redirected(self, node: Any) -> Node:
        body = node.child_by_field_name("body")
        redirects = tuple(
            r for c in node.children if c.type in _REDIRECTS for r in self.redirects(c)
        )
        line = node.start_point.row
        if body is None:
            return Command(line, (), (), redirects)
        inner = self.statement(body)
        return _with_redirects(inner, redirects, line)

    def pipeline(self, node: Any) -> Node:
        commands = tuple(self.statement(c) for c in node.children if c.is_named)
        if len(commands) == 1:
            return commands[0]
        return Pipeline(node.start_point.row, commands)

    def negated(self, node: Any) -> Node:
        inner = next(c for c in node.children if c.is_named)
        return Not(node.start_point.row, self.statement(inner))

    def and_or(self, node: Any) -> Node:
        named = [c for c in node.children if c.is_named]
        op = next((self.text(c) for c in node.children if c.type in ("&&", "||")), "&&")
        if len(named) != 2:
            return self.unread(node, "a list stagegate does not read")
        return AndOr(node.start_point.row, self.statement(named[0]), op, self.statement(named[1]))

    def if_statement(self, node: Any) -> Node:
        branches: list[tuple[Block, Block]] = []
        otherwise: Block | None = None
        condition: list[Any] = []
        body: list[Any] = []
        stage = "condition"
        for child in node.children:
            kind = child.type
            if kind == "then":
                stage = "body"
            elif kind in ("elif_clause", "else_clause") or kind in ("if", "fi"):
                continue
            elif stage == "condition":
                condition.append(child)
            else:
                body.append(child)
        branches.append((self.block(condition), self.block(body)))
        for child in node.children:
            if child.type == "elif_clause":
                cond: list[Any] = []
                then: list[Any] = []
                into = cond
                for part in child.children:
                    if part.type == "then":
                        into = then
                    elif part.type != "elif":
                        into.append(part)
                branches.append((self.block(cond), self.block(then)))
            elif child.type == "else_clause":
                otherwise = self.block([c for c in child.children if c.type != "else"])
        return If(node.start_point.row, tuple(branches), otherwise)

    def case_statement(self, node: Any) -> Node:
        value = node.child_by_field_name("value")
        items: list[CaseItem] = []
        for child in node.children:
            if child.type != "case_item":
                continue
            patterns: list[Word] = []
            body: list[Any] = []
            end = ";;"
            seen_paren = False
            for i, part in enumerate(child.children):
                field = child.field_name_for_child(i)
                if field == "value":
                    patterns.append(self.word(part))
                elif part.type == ")" and not seen_paren:
                    seen_paren = True
                elif field in ("termination", "fallthrough"):
                    end = self.text(part)
                elif seen_paren and part.is_named:
                    body.append(part)
            items.append(CaseItem(tuple(patterns), self.block(body), end))
        word = self.word(value) if value is not None else self.empty()
        return Case(node.start_point.row, word, tuple(items))

    def for_statement(self, node: Any) -> Node:
        line = node.start_point.row
        if self.text(node.children[0]) != "for":
            return self.unread(node, "a select loop, which reads its input")
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        words: list[Word] | None = None
        for i, child in enumerate(node.children):
            if child.type == "in":
                words = []
            elif node.field_name_for_child(i) == "value":
                (words if words is not None else []).append(self.word(child))
        name = self.text(variable) if variable is not None else ""
        return For(line, name, None if words is None else tuple(words), self.body_of(body))

    def body_of(self, body: Any) -> Block:
        if body is None:
            return Block(())
        if body.type in ("do_group", "compound_statement"):
            return self.block(list(body.children))
        return Block((self.statement(body),))

    def c_for(self, node: Any) -> Node:
        pieces: list[list[str]] = [[]]
        inside = False
        body = node.child_by_field_name("body")
        for child in node.children:
            if child.type == "((":
                inside = True
            elif child.type == "))":
                inside = False
            elif inside and child.type in (";", "\n"):
                pieces.append([])
            elif inside:
                pieces[-1].append(self.text(child))
        while len(pieces) < 3:
            pieces.append([])
        init, condition, update = (", ".join(p) for p in pieces[:3])
        return CFor(node.start_point.row, init, condition, update, self.body_of(body))

    def while_statement(self, node: Any) -> Node:
        until = self.text(node.children[0]) == "until"
        condition = [
            c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition"
        ]
        body = node.child_by_field_name("body")
        return Loop(node.start_point.row, until, self.block(condition), self.body_of(body))

    def function(self, node: Any) -> Node:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        inner: Node = self.statement(body) if body is not None else Block(())
        return Function(node.start_point.row, self.text(name) if name else "", inner)

    def subshell(self, node: Any) -> Node:
        return Subshell(node.start_point.row, self.block(list(node.children)))

    def compound(self, node: Any) -> Node:
        first = node.children[0].type if node.children else ""
        if first == "((":
            inner = self.span(node.children[0].end_byte, node.children[-1].start_byte)
            return ArithCommand(node.start_point.row, inner)
        return Group(node.start_point.row, self.block(list(node.children)))

    def list_node(self, node: Any) -> Node:
        return self.and_or(node)

    def test_command(self, node: Any) -> Node:
        opener = self.text(node.children[0]) if node.children else "["
        inner = [c for c in node.children if c.is_named]
        if opener == "((":
            inner_text = self.span(node.children[0].end_byte, node.children[-1].start_byte)
            return ArithCommand(node.start_point.row, inner_text)
        if len(inner) != 1:
            return self.unread(node, "a test stagegate does not read")
        expr = self.test_expr(inner[0])
        if opener == "[":  # `[` is the test command: == and = alike, no pattern matching
            expr = TestExpr("[", (expr,))
        return Test(node.start_point.row, expr)

    def test_expr(self, node: Any) -> TestExpr:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return self._test_expr(node)
        finally:
            self.depth -= 1

    def _test_expr(self, node: Any) -> TestExpr:
        kind = node.type
        if kind == "binary_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            op = next(
                (
                    self.text(c)
                    for i, c in enumerate(node.children)
                    if node.field_name_for_child(i) not in ("left", "right")
                ),
                "",
            )
            if left is None or right is None:
                return TestExpr("?", ())
            if op in ("&&", "||"):
                return TestExpr(op, (self.test_expr(left), self.test_expr(right)))
            if op == "=~":
                return TestExpr(op, (self.word(left), Word((Lit(self.text(right), True),), "")))
            return TestExpr(op, (self.word(left), self.word(right)))
        if kind == "unary_expression":
            op_node = node.children[0]
            operand = node.children[-1]
            op = self.text(op_node)
            if op == "!":
                return TestExpr("!", (self.test_expr(operand),))
            return TestExpr(op, (self.word(operand),))
        if kind == "parenthesized_expression":
            inner = [c for c in node.children if c.is_named]
            if len(inner) != 1:
                return TestExpr("?", ())
            return TestExpr("(", (self.test_expr(inner[0]),))
        return TestExpr("", (self.word(node),))

    # -- words

    def word(self, node: Any) -> Word:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return Word(self.marked(tuple(self.parts(node, quoted=False))), self.text(node))
        finally:
            self.depth -= 1

    def marked(self, parts: tuple[Part, ...]) -> tuple[Part, ...]:
        """``parts`` with each ``${{ }}`` mark in literal text as a ``Gh`` part."""
        if not self.mark or not any(isinstance(p, Lit) and self.mark in p.text for p in parts):
            return parts
        out: list[Part] = []
        for part in parts:
            if not isinstance(part, Lit) or self.mark not in part.text:
                out.append(part)
                continue
            pieces = part.text.split(self.mark)
            for i, piece in enumerate(pieces):
                if i % 2 and piece.isdigit():
                    out.append(Gh(int(piece), part.quoted))
                elif piece:
                    out.append(Lit(piece, part.quoted))
        return tuple(out)

    def parts(self, node: Any, *, quoted: bool) -> list[Part]:
        kind = node.type
        method = _PARTS.get(kind)
        if method is not None:
            self.depth += 1  # `${A:-${B:-...}}`, `"$(...)"`: a word's pieces nest too
            try:
                if self.depth > MAX_DEPTH:
                    raise TooDeep
                found: list[Part] = method(self, node, quoted)
            finally:
                self.depth -= 1
            lead = self.lead(node)
            if lead:  # the grammar's ``${`` and backquote tokens take the blanks before them
                return [Lit(lead, True) if quoted else Lit(lead, False), *found]
            return found
        if not node.is_named or kind in (
            "word",
            "number",
            "extglob_pattern",
            "regex",
            "variable_name",
        ):
            text = self.text(node)
            return [Lit(text, True)] if quoted else _unquoted(text)
        return [
            Opaque(
                self.text(node),
                f"{self.text(node)} is shell syntax stagegate does not compute",
                quoted,
            )
        ]

    def string(self, node: Any, quoted: bool) -> list[Part]:
        del quoted
        parts: list[Part] = []
        children = node.children
        pos = children[0].end_byte if children and children[0].type == '"' else node.start_byte
        end = node.end_byte - 1 if children and children[-1].type == '"' else node.end_byte
        for child in children:
            if child.type == '"' or child.start_byte < pos:
                continue
            if child.start_byte > pos:
                parts.append(Lit(_dquoted(self.span(pos, child.start_byte)), True))
            if child.type == "string_content":
                parts.append(Lit(_dquoted(self.text(child)), True))
            else:
                parts += self.parts(child, quoted=True)
            pos = child.end_byte
        if end > pos:
            parts.append(Lit(_dquoted(self.span(pos, end)), True))
        if node.type == "translated_string" and parts and isinstance(parts[0], Lit):
            parts[0] = Lit(parts[0].text.removeprefix("$"), True)
        return parts or [Lit("", True)]

    def raw_string(self, node: Any, quoted: bool) -> list[Part]:
        return [Lit(self.text(node)[1:-1], True)]

    def ansi_c(self, node: Any, quoted: bool) -> list[Part]:
        text = self.text(node)
        decoded = _ansi_c(text[2:-1])
        if decoded is None:
            return [Opaque(text, f"{text}: an escape stagegate does not decode", quoted)]
        return [Lit(decoded, True)]

    def concatenation(self, node: Any, quoted: bool) -> list[Part]:
        parts: list[Part] = []
        pos = node.start_byte
        for child in node.children:
            if child.start_byte > pos:  # text the grammar left between pieces
                gap = self.span(pos, child.start_byte)
                parts += [Lit(gap, True)] if quoted else _unquoted(gap)
            parts += self.parts(child, quoted=quoted)
            pos = child.end_byte
        return parts

    def simple_expansion(self, node: Any, quoted: bool) -> list[Part]:
        named = [c for c in node.children if c.is_named]
        if not named:
            text = self.text(node)
            return [Lit(text, True)] if quoted else _unquoted(text)
        return [Param(self.text(named[0]), quoted)]

    def expansion(self, node: Any, quoted: bool) -> list[Part]:
        source = self.text(node)
        children = node.children[1:-1]  # between ${ and }
        name = ""
        op = ""
        prefix = ""
        args: list[list[Part]] = []
        for i, child in enumerate(children):
            kind = child.type
            field = node.field_name_for_child(i + 1)
            if kind in ("variable_name", "special_variable_name") and not name and not args:
                name = self.text(child)
                continue
            if kind == "subscript":
                return self.element(node, child, quoted)
            if field == "operator" or (not child.is_named and kind not in ("word",)):
                text = self.text(child)
                if not name:
                    prefix += text
                elif not op:
                    op = text
                    args.append([])
                else:
                    if (op.startswith("/") and text == "/" and len(args) == 1) or (
                        op == ":" and text == ":" and len(args) == 1
                    ):
                        args.append([])
                    elif op == "@":
                        op += text
                    else:
                        args[-1].append(Lit(text, True))
                continue
            if not op:
                return [
                    Opaque(
                        source, f"{source} is a shell expansion stagegate does not compute", quoted
                    )
                ]
            if op == ":" or kind in ("binary_expression", "unary_expression"):
                args[-1].append(Lit(self.text(child), True))
            elif kind == "regex":
                args[-1] += _pattern_parts(self.text(child))
            else:
                args[-1] += self.parts(
                    child, quoted=True if op in ("/", "//", "/#", "/%") else quoted
                )
        if op == "@" or op.startswith("@"):
            op = "@" + "".join(
                self.text(c) for c in children if c.type not in ("variable_name", "@")
            )
        if prefix == "#" and not name and not op:
            return [Param("#", quoted)]
        if prefix in ("#", "!") and not op:
            op = {"#": "length", "!": "indirect"}[prefix]
        elif prefix:
            return [
                Opaque(source, f"{source} is a shell expansion stagegate does not compute", quoted)
            ]
        if op == ":" and args:
            args = [[Lit(self.span(*_arg_span(node, i)), True)] for i in range(len(args))] or args
        words = tuple(Word(self.marked(tuple(a)), "") for a in args)
        if not op:
            return [Param(name, quoted)]
        return [Expand(name, op, words, quoted, source)]

    def element(self, node: Any, subscript: Any, quoted: bool) -> list[Part]:
        """``${A[I]}``, ``${A[@]}``, ``${A[*]}``, ``${#A[...]}``; any other operator
        on an array is not computed."""
        source = self.text(node)
        array = subscript.child_by_field_name("name")
        index = subscript.child_by_field_name("index")
        around = [self.text(c) for c in node.children if c is not subscript]
        if array is None or index is None or around not in (["${", "}"], ["${", "#", "}"]):
            return [
                Opaque(
                    source, f"{source}: an operator on an array stagegate does not compute", quoted
                )
            ]
        written = self.text(index)
        return [Element(self.text(array), written, len(around) == 3, quoted, source)]

    def substitution(self, node: Any, quoted: bool) -> list[Part]:
        source = self.text(node)
        inner = [c for c in node.children if c.is_named]
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            body = self.block(inner)
        finally:
            self.depth -= 1
        return [Subst(body, quoted, source)]

    def arithmetic(self, node: Any, quoted: bool) -> list[Part]:
        source = self.text(node)
        children = node.children
        start = children[0].end_byte if children else node.start_byte
        end = children[-1].start_byte if children else node.end_byte
        return [Arith(self.span(start, end), quoted, source)]

    def brace(self, node: Any, quoted: bool) -> list[Part]:
        return [Lit(self.text(node), False)]

    def process(self, node: Any, quoted: bool) -> list[Part]:
        source = self.text(node)
        return [Opaque(source, f"{source} runs a command", quoted)]


def _arg_span(node: Any, index: int) -> tuple[int, int]:
    """The bytes of the ``index``-th argument of ``${X:off:len}``: between its colons."""
    colons = [c for c in node.children if c.type == ":"]
    start = colons[index].end_byte if index < len(colons) else node.end_byte - 1
    end = colons[index + 1].start_byte if index + 1 < len(colons) else node.end_byte - 1
    return start, end


def _with_redirects(inner: Node, redirects: tuple[Redirect, ...], line: int) -> Node:
    """Redirections written after a simple command or a pipeline belong to its (last)
    command; after a compound command, to all of it."""
    if isinstance(inner, Command):
        return Command(inner.line, inner.assigns, inner.words, inner.redirects + redirects)
    if isinstance(inner, Pipeline) and isinstance(inner.commands[-1], Command):
        last = _with_redirects(inner.commands[-1], redirects, line)
        return Pipeline(inner.line, (*inner.commands[:-1], last))
    return Redirected(line, inner, redirects)


def _keyed(text: str) -> bool:
    """Whether an array element is written ``[KEY]=VALUE``."""
    return text.startswith("[") and "]=" in text


def _strip_tabs(text: str) -> str:
    return "\n".join(line.lstrip("\t") for line in text.split("\n"))


def _heredoc_text(text: str) -> str:
    """A here-document's literal text: ``\\$``, ``\\```, ``\\\\`` and a backslash-newline
    are what double quotes make of them; other backslashes stay."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in "$`\\\n":
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _dquoted(text: str) -> str:
    """Text inside double quotes: ``\\$``, ``\\```, ``\\"``, ``\\\\`` and a backslash-newline."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _unquoted(text: str) -> list[Part]:
    """An unquoted word's text: a backslash quotes the next character (a backslash-newline
    is nothing); the rest is unquoted (globs, splitting)."""
    if "\\" not in text:
        return [Lit(text, False)] if text else []
    parts: list[Part] = []
    run: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if run:
                parts.append(Lit("".join(run), False))
                run = []
            if text[i + 1] != "\n":
                parts.append(Lit(text[i + 1], True))
            i += 2
            continue
        run.append(char)
        i += 1
    if run:
        parts.append(Lit("".join(run), False))
    return parts


def _pattern_parts(text: str) -> list[Part]:
    """A pattern of ``${X%PATTERN}`` as the grammar leaves it (raw text): quotes and
    backslashes make characters literal; ``$NAME`` and ``${NAME}`` are variables."""
    parts: list[Part] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            parts.append(Lit(text[i + 1], True))
            i += 2
        elif char == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            parts.append(Lit(text[i + 1 : end], True))
            i = end + 1
        elif char == '"' and "$" not in text[i:] and "`" not in text[i:]:
            end = text.find('"', i + 1)
            end = len(text) if end < 0 else end
            parts.append(Lit(_dquoted(text[i + 1 : end]), True))
            i = end + 1
        elif char == "$" and i + 1 < len(text):
            name, end = _simple_name(text, i + 1)
            if name is None:
                return [Opaque(text, f"{text}: a pattern stagegate does not read")]
            parts.append(Param(name, False))
            i = end
        elif char in '`"':
            return [Opaque(text, f"{text}: a pattern stagegate does not read")]
        else:
            parts.append(Lit(char, False))
            i += 1
    return parts


def _simple_name(text: str, start: int) -> tuple[str | None, int]:
    """``NAME`` or ``{NAME}`` at ``start`` (after a ``$``), and where it ends."""
    braced = text.startswith("{", start)
    pos = start + 1 if braced else start
    end = pos
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    name = text[pos:end]
    if not name or (name[0].isdigit() and not name.isdigit()):
        return None, start
    if braced:
        if not text.startswith("}", end):
            return None, start
        end += 1
    return name, end


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_C_ESCAPES.update({"e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"})


def _ansi_c(text: str) -> str | None:
    """The text of ``$'...'``: C escapes, octal ``\\NNN``, hex ``\\xHH``; None for
    ``\\u``, ``\\c`` and the like."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = text[i + 1 : i + 4]
            count = len(digits) - len(digits.lstrip("01234567"))
            out.append(chr(int(digits[:count], 8) & 0xFF))
            i += 1 + count
        elif nxt == "x":
            digits = text[i + 2 : i + 4]
            count = len(digits) - len(digits.lstrip("0123456789abcdefABCDEF"))
            if not count:
                return None
            out.append(chr(int(digits[:count], 16)))
            i += 2 + count
        else:
            return None
    return "".join(out)


_STATEMENTS: dict[str, Any] = {
    "command": _Converter.command,
    "variable_assignment": _Converter.variable_assignment,
    "variable_assignments": _Converter.variable_assignments,
    "declaration_command": _Converter.declaration,
    "unset_command": _Converter.unset,
    "redirected_statement": _Converter.redirected,
    "pipeline": _Converter.pipeline,
    "negated_command": _Converter.negated,
    "list": _Converter.list_node,
    "if_statement": _Converter.if_statement,
    "case_statement": _Converter.case_statement,
    "for_statement": _Converter.for_statement,
    "c_style_for_statement": _Converter.c_for,
    "while_statement": _Converter.while_statement,
    "function_definition": _Converter.function,
    "subshell": _Converter.subshell,
    "compound_statement": _Converter.compound,
    "test_command": _Converter.test_command,
}
_PARTS: dict[str, Any] = {
    "string": _Converter.string,
    "translated_string": _Converter.string,
    "raw_string": _Converter.raw_string,
    "ansi_c_string": _Converter.ansi_c,
    "concatenation": _Converter.concatenation,
    "simple_expansion": _Converter.simple_expansion,
    "expansion": _Converter.expansion,
    "command_substitution": _Converter.substitution,
    "arithmetic_expansion": _Converter.arithmetic,
    "brace_expression": _Converter.brace,
    "process_substitution": _Converter.process,
}
