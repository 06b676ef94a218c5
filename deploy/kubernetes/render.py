#!/usr/bin/env python3
"""Renders a kustomization the way `kubectl kustomize` does, for the few features the files
in deploy/kubernetes use: `resources` (files, and folders holding a kustomization.yaml),
`namespace` and `images` (newName/newTag). Anything else in a kustomization.yaml is refused,
not ignored. It exists so the tests need only Python and PyYAML on a fresh machine (Debian's
kubectl is too old for these files' kustomize); where a current `kubectl` is installed the
tests check that both render the same objects.

    deploy/kubernetes/render.py deploy/kubernetes/overlays/example > all.yaml
    deploy/kubernetes/render.py --json deploy/kubernetes/overlays/example   (a JSON list)
"""
import json
import os
import sys

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "images"}
# kinds without a namespace among those used here
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}


def load(path):
    with open(path) as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def render(folder):
    kustomization = None
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        if os.path.exists(os.path.join(folder, name)):
            kustomization = load(os.path.join(folder, name))[0]
            break
    if kustomization is None:
        sys.exit(f"render: no kustomization.yaml in {folder}")
    unknown = set(kustomization) - SUPPORTED
    if unknown:
        sys.exit(f"render: {folder}: unsupported kustomization fields {sorted(unknown)} (use kubectl kustomize)")
    objects = []
    for entry in kustomization.get("resources", []):
        path = os.path.normpath(os.path.join(folder, entry))
        objects.extend(render(path) if os.path.isdir(path) else load(path))
    namespace = kustomization.get("namespace")
    if namespace:
        for obj in objects:
            if obj.get("kind") == "Namespace":
                obj["metadata"]["name"] = namespace
            elif obj.get("kind") not in CLUSTER_SCOPED:
                obj.setdefault("metadata", {})["namespace"] = namespace
    for image in kustomization.get("images", []):
        for obj in objects:
            for container in containers(obj):
                name, _, _ = container.get("image", "").partition(":")
                if name == image["name"]:
                    new = image.get("newName", name)
                    if "newTag" in image:
                        new += ":" + str(image["newTag"])
                    container["image"] = new
    return objects


def containers(obj):
    spec = obj.get("spec", {})
    pod = spec.get("template", {}).get("spec")  # Deployment, StatefulSet, Job
    if pod is None:
        pod = spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec")  # CronJob
    if pod is None:
        return []
    return pod.get("containers", []) + pod.get("initContainers", [])


if __name__ == "__main__":
    arguments = sys.argv[1:]
    as_json = "--json" in arguments
    arguments = [a for a in arguments if a != "--json"]
    if len(arguments) != 1:
        sys.exit("usage: render.py [--json] KUSTOMIZATION_DIR")
    objects = render(arguments[0])
    if as_json:
        json.dump(objects, sys.stdout, indent=1)
    else:
        yaml.safe_dump_all(objects, sys.stdout, sort_keys=False, default_flow_style=False)
