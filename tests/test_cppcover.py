"""zlctool.cppcover: which options must be on to compile each line."""

from zlctool.cppcover import guards

SRC = """\
int a;
#ifdef CONFIG_NUMA
int b;
# if IS_ENABLED(CONFIG_DEBUG_FS) && !defined(CONFIG_X)
int c;
# else
int d;
# endif
#ifndef CONFIG_SMP
int e;
#endif
#if defined(CONFIG_MEMCG) || \\
    defined(CONFIG_VM_EVENT_COUNTERS)
int f;
#elif defined(CONFIG_Y)
int g;
#endif
#endif /* CONFIG_NUMA */
int h;
"""


def need(line):
    lines = SRC.split("\n")
    return guards(lines)[lines.index(line)]


def test_ifdef_and_nested_if():
    assert need("int a;") == []
    assert need("int b;") == [("CONFIG_NUMA",)]
    assert need("int c;") == [("CONFIG_DEBUG_FS",), ("CONFIG_NUMA",)]


def test_else_ifndef_and_elif_ask_for_nothing_more():
    assert need("int d;") == [("CONFIG_NUMA",)]
    assert need("int e;") == [("CONFIG_NUMA",)]
    assert need("int g;") == [("CONFIG_NUMA",)]


def test_or_across_a_continuation_is_one_group():
    assert need("int f;") == [("CONFIG_MEMCG", "CONFIG_VM_EVENT_COUNTERS"), ("CONFIG_NUMA",)]


def test_endif_closes():
    assert need("int h;") == []
