package app

import (
	"slices"
	"strings"
)

// Summary is Argo CD's status.summary: the images the app runs and the
// URLs it is reached at, read from its manifests.
type Summary struct {
	Images       []string `json:"images,omitempty"`
	ExternalURLs []string `json:"externalURLs,omitempty"`
}

// ExternalLinkAnnotation names a URL of a resource, as Argo CD's.
const ExternalLinkAnnotation = "link.argocd.argoproj.io/external-link"

// SummaryOf lists, sorted and once each, the container images of the pod
// templates of objs (Pods, workloads, Jobs, CronJobs) and the external
// URLs they name: each Ingress rule's host (https when its TLS lists the
// host), and the external-link annotation. nil when there are none.
func SummaryOf(objs []map[string]any) *Summary {
	var s Summary
	for _, o := range objs {
		kind, _ := o["kind"].(string)
		spec, _ := o["spec"].(map[string]any)
		if pod := podSpecOf(kind, spec); pod != nil {
			for _, key := range []string{"initContainers", "containers"} {
				list, _ := pod[key].([]any)
				for _, c := range list {
					if m, ok := c.(map[string]any); ok {
						if img, _ := m["image"].(string); img != "" {
							s.Images = append(s.Images, img)
						}
					}
				}
			}
		}
		if kind == "Ingress" {
			s.ExternalURLs = append(s.ExternalURLs, ingressURLs(spec)...)
		}
		md, _ := o["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if link, _ := ann[ExternalLinkAnnotation].(string); link != "" {
			s.ExternalURLs = append(s.ExternalURLs, link)
		}
	}
	slices.Sort(s.Images)
	slices.Sort(s.ExternalURLs)
	s.Images, s.ExternalURLs = slices.Compact(s.Images), slices.Compact(s.ExternalURLs)
	if len(s.Images) == 0 && len(s.ExternalURLs) == 0 {
		return nil
	}
	return &s
}

// podSpecOf is the pod spec of a Pod or of a workload's template.
func podSpecOf(kind string, spec map[string]any) map[string]any {
	dig := func(m map[string]any, keys ...string) map[string]any {
		for _, k := range keys {
			m, _ = m[k].(map[string]any)
		}
		return m
	}
	switch kind {
	case "Pod":
		return spec
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController":
		return dig(spec, "template", "spec")
	case "CronJob":
		return dig(spec, "jobTemplate", "spec", "template", "spec")
	}
	return nil
}

// ingressURLs are an Ingress's hosts as URLs.
func ingressURLs(spec map[string]any) []string {
	tls := map[string]bool{}
	tlsList, _ := spec["tls"].([]any)
	for _, t := range tlsList {
		m, _ := t.(map[string]any)
		hosts, _ := m["hosts"].([]any)
		for _, h := range hosts {
			if s, ok := h.(string); ok {
				tls[s] = true
			}
		}
	}
	var out []string
	rules, _ := spec["rules"].([]any)
	for _, r := range rules {
		m, _ := r.(map[string]any)
		host, _ := m["host"].(string)
		if host == "" || strings.Contains(host, "*") {
			continue
		}
		scheme := "http://"
		if tls[host] {
			scheme = "https://"
		}
		out = append(out, scheme+host)
	}
	return out
}
