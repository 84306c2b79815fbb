"""Reads memsync's Graphiti-shaped projection through graphiti-core's own API.

Usage: probe.py write|check  (spec JSON on stdin, observations JSON on stdout).
No LLM and no embedder is ever called: search uses BM25 only and the
embedder raises if asked.
"""

import asyncio
import json
import os
import sys
from datetime import datetime, timezone

from graphiti_core import Graphiti
from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.nodes import EpisodeType, EpisodicNode
from graphiti_core.search.search_config import (
    EdgeReranker,
    EdgeSearchConfig,
    EdgeSearchMethod,
    NodeReranker,
    NodeSearchConfig,
    NodeSearchMethod,
    SearchConfig,
)


class NoEmbedder(EmbedderClient):
    async def create(self, input_data):
        raise AssertionError('the embedder was called: keyword search must not embed')

    async def create_batch(self, input_data_list):
        raise AssertionError('the embedder was called: keyword search must not embed')


BM25 = SearchConfig(
    edge_config=EdgeSearchConfig(search_methods=[EdgeSearchMethod.bm25], reranker=EdgeReranker.rrf),
    node_config=NodeSearchConfig(search_methods=[NodeSearchMethod.bm25], reranker=NodeReranker.rrf),
    limit=50,
)


def iso(d):
    return d.isoformat() if d else None


async def main():
    mode = sys.argv[1]
    spec = json.load(sys.stdin)
    driver = Neo4jDriver(os.environ['NEO4J_URI'], 'neo4j', 'unused', database=spec.get('database') or 'neo4j')
    g = Graphiti(graph_driver=driver, embedder=NoEmbedder())
    try:
        out = {}
        if mode == 'write':
            ep = EpisodicNode(
                name='written by graphiti', group_id='main', source=EpisodeType.text,
                source_description='graphiti-core', content='graphiti wrote this itself',
                valid_at=datetime.now(timezone.utc), created_at=datetime.now(timezone.utc), entity_edges=[],
            )
            await ep.save(driver)
            out['foreign'] = ep.uuid
        else:
            out['searches'] = []
            for s in spec['searches']:
                res = await g.search_(s['query'], config=BM25, group_ids=s['groups'])
                out['searches'].append({
                    'facts': [{'fact': e.fact, 'group_id': e.group_id, 'name': e.name,
                               'invalid_at': iso(e.invalid_at), 'expired_at': iso(e.expired_at)} for e in res.edges],
                    'nodes': [{'name': n.name, 'group_id': n.group_id} for n in res.nodes],
                })
            eps = await g.retrieve_episodes(datetime.now(timezone.utc), last_n=100, group_ids=spec['episode_groups'])
            out['episodes'] = [{'uuid': e.uuid, 'valid_at': iso(e.valid_at), 'content': e.content, 'group_id': e.group_id} for e in eps]
            got = await EpisodicNode.get_by_uuids(driver, [spec['foreign']])
            out['foreign'] = [e.content for e in got]
        json.dump(out, sys.stdout)
    finally:
        await g.close()


asyncio.run(main())
