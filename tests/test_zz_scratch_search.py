import time
import numpy as np
import pytest
from graph_memory import search
from tests.factories import FirmFactory, UserFactory
from tests import search_support as ss
from accounts.models import User

pytestmark = pytest.mark.django_db


def test_recall(settings):
    t = time.time()
    firm = FirmFactory(slug="big")
    corpus = ss.load_corpus(firms=[firm], per_firm=20000)
    print("load", time.time() - t)
    admin = UserFactory(firm=firm, username="adm", role=User.Role.ADMIN)
    viewers = [(admin, corpus.case_ids[firm.pk])]
    for share in (0.001, 0.01, 0.1):
        viewers.append(ss.grant_share(corpus, firm, share=share, username=f"v{share}"))
    qs = corpus.queries(20, seed=3)
    for exact_max in (10000, 100):
        settings.GRAPH_MEMORY = {"SEARCH_EXACT_MAX": exact_max}
        for viewer, visible in viewers:
            recs = []; lat = []; methods = set()
            for q in qs:
                t = time.time()
                r = search.vector_ranking(viewer=viewer, vector=q, model=ss.MODEL, depth=10)
                lat.append(time.time() - t)
                methods.add(r.method)
                exact = ss.exact_top(corpus, firm, visible, q, 10)
                recs.append(len(set(exact) & set(r.case_ids)) / 10)
            print(exact_max, len(visible), methods, np.mean(recs), min(recs), np.median(lat) * 1000)
