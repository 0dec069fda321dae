#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""libpto's files depend on each other in one direction only.

Reads the symbols every object of libpto defines and uses (nm), draws an
edge from a file to each file whose symbols it uses, and fails (TAP) on
any cycle: a file-level circular dependency in lib/ means a function
lives away from its subject.  Usage: layering.py OBJDIR (build/lib).
"""
import glob
import os
import subprocess
import sys


def symbols(obj, flags):
    out = subprocess.run(['nm'] + flags + [obj], capture_output=True,
                         text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def graph(objdir):
    objs = sorted(glob.glob(os.path.join(objdir, '**', '*.o'),
                            recursive=True))
    where = {}
    for o in objs:
        for line in subprocess.run(['nm', '--defined-only', '-g', o],
                                   capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            parts = line.split()
            if len(parts) == 3:
                where[parts[2]] = o
    edges = {o: set() for o in objs}
    for o in objs:
        for sym in symbols(o, ['-u']):
            if sym in where and where[sym] != o:
                edges[o].add(where[sym])
    return objs, edges


def cycles(objs, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in objs:
        if v not in index:
            visit(v)
    return found


def main():
    objdir = sys.argv[1]
    objs, edges = graph(objdir)
    ok = len(objs) >= 10
    print('%s 1 - %d objects of libpto under %s' %
          ('ok' if ok else 'not ok', len(objs), objdir))
    found = cycles(objs, edges)
    for comp in found:
        rel = [os.path.relpath(o, objdir) for o in comp]
        print('# cycle: ' + ' <-> '.join(rel))
        for o in comp:
            uses = sorted(os.path.relpath(w, objdir) for w in edges[o]
                          if w in comp)
            print('#   %s uses %s' % (os.path.relpath(o, objdir),
                                      ', '.join(uses)))
    print('%s 2 - no file-level circular dependency in lib/' %
          ('not ok' if found else 'ok'))
    print('1..2')
    return 0 if ok and not found else 1


if __name__ == '__main__':
    sys.exit(main())
