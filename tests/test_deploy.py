"""deploy/dask-cluster.yaml, the Kubernetes spec of a bench fleet, checked against the DaskCluster schema that
dask-kubernetes' operator installs (its CRD's openAPIV3Schema), and read for what the fleet relies on: a worker
that takes one shard at a time (the `bench` resource, one thread) on dedicated CPUs."""

from __future__ import annotations

from importlib import resources
from typing import Any

import jsonschema
import yaml

from harness.paths import ROOT
from harness.run.fleet import BENCH

SPEC = ROOT / "deploy" / "dask-cluster.yaml"


def dask_cluster_schema() -> dict[str, Any]:
    """The DaskCluster custom resource's schema, as dask-kubernetes' operator chart installs its CRD (resolved)."""
    chart = resources.files("dask_kubernetes.operator") / "deployment" / "helm" / "dask-kubernetes-operator"
    crds = chart / "crds" / "daskcluster.yaml"
    crd = yaml.safe_load(crds.read_text())
    (version,) = [each for each in crd["spec"]["versions"] if each["name"] == "v1"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def test_the_kubernetes_spec_is_a_valid_dask_cluster() -> None:
    spec = yaml.safe_load(SPEC.read_text())
    assert (spec["apiVersion"], spec["kind"]) == ("kubernetes.dask.org/v1", "DaskCluster")
    jsonschema.validate(spec, dask_cluster_schema())


def test_a_bench_worker_takes_one_shard_at_a_time_on_dedicated_cpus() -> None:
    spec = yaml.safe_load(SPEC.read_text())
    (worker,) = spec["spec"]["worker"]["spec"]["containers"]
    args = worker["args"]
    assert args[:2] == ["dask", "worker"] and args[args.index("--resources") + 1] == f"{BENCH}=1"
    assert args[args.index("--nthreads") + 1] == "1"
    limits, requests = worker["resources"]["limits"], worker["resources"]["requests"]
    assert limits["cpu"] == requests["cpu"] and int(limits["cpu"]) >= 2  # a server core and a driver core


def test_a_wrong_spec_is_refused_by_the_schema() -> None:
    spec = yaml.safe_load(SPEC.read_text())
    spec["spec"]["worker"]["replicas"] = "four"
    try:
        jsonschema.validate(spec, dask_cluster_schema())
    except jsonschema.ValidationError as error:
        assert "replicas" in str(error.absolute_path)
    else:
        raise AssertionError("a replica count that is not a number passed the schema")
