"""How the project is shipped: container images (:mod:`deploy.images`) and the
Kubernetes manifests generated from the service list (:mod:`deploy.k8s.generate`)."""
