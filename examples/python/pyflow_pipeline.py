"""A @df.pyflow pipeline of Python objects, with streaming output.

    text ── split (yields one word at a time) ── Counter.add ── (word, count)

`split` is a generator: each `yield` is one output message. `Counter` is
a class node keeping state across messages (its constructor argument
comes from fnode()). feed/fetch carry any picklable Python object.
Prints each (word, count) pair.
"""
import dataflow as df


@df.pyflow
def split(text):
    for word in text.split():
        yield word


@df.pyflow
class Counter:
    def __init__(self, start):
        self.counts = {}
        self.start = start

    @df.method()
    def add(self, word):
        self.counts[word] = self.counts.get(word, self.start) + 1
        return (word, self.counts[word])


def main() -> None:
    df.init({"ge.exec.deviceId": "0"})
    text = df.FlowData(name="text")
    counted = Counter.fnode(0).add(split.fnode()(text))
    graph = df.FlowGraph([counted])
    assert graph.feed({text: "to be or not to be"}) == 0
    for _ in range(6):
        outputs, ret = graph.fetch(timeout=10000)
        assert ret == 0, f"fetch returned {ret}"
        print("counted:", outputs[0])
    df.finalize()


if __name__ == "__main__":
    main()
