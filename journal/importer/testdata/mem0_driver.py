"""Drives a real Mem0 (mem0ai) for the importer's tests, with no network.

Usage: python mem0_driver.py DATA_DIR < commands.jsonl
Each line of stdin is a command: {"op": "add", "text": ...},
{"op": "update", "id": ..., "text": ...}, {"op": "delete", "id": ...} or
{"op": "get_all", "out": PATH} (writes get_all's JSON to PATH). Each
command prints one JSON line: Mem0's answer.

The vector store is Qdrant in local mode under DATA_DIR (kept across
runs); the embedder is replaced by a deterministic hash embedder, and
memories are added with infer=False, so no LLM and no embedding API is
ever called (the OpenAI client Mem0 builds gets a dummy key and is unused).
"""
import atexit
import hashlib
import json
import os
import sys

os.environ.setdefault("OPENAI_API_KEY", "sk-unused")
os.environ["MEM0_TELEMETRY"] = "False"

from mem0 import Memory  # noqa: E402

DIMS = 8


class HashEmbedder:
    """Deterministic local embedder."""

    def embed(self, text, memory_action=None):
        h = hashlib.sha256(text.encode()).digest()
        return [(h[i % len(h)] / 255.0) - 0.5 for i in range(DIMS)]


base = sys.argv[1]
m = Memory.from_config({
    "vector_store": {"provider": "qdrant", "config": {
        "collection_name": "memsync_test", "path": os.path.join(base, "qdrant"),
        "embedding_model_dims": DIMS, "on_disk": True}},
    "embedder": {"provider": "openai", "config": {"embedding_dims": DIMS}},
    "history_db_path": os.path.join(base, "history.db"),
})
m.embedding_model = HashEmbedder()
atexit.register(lambda: m.vector_store.client.close())

for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd["op"]
    if op == "add":
        out = m.add(cmd["text"], user_id="u1", infer=False)
    elif op == "update":
        out = m.update(cmd["id"], cmd["text"])
    elif op == "delete":
        out = m.delete(cmd["id"])
    elif op == "get_all":
        with open(cmd["out"], "w") as f:
            json.dump(m.get_all(filters={"user_id": "u1"}), f, default=str)
        out = {}
    else:
        raise SystemExit("unknown op " + op)
    print(json.dumps(out, default=str))
    sys.stdout.flush()
