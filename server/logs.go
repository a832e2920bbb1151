package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/rbac"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// maxLogPods bounds the pods one logs request streams, as Argo CD's
// server.maxPodLogsToRender (default 10) does: an app of many pods cannot
// make the server hold a stream per container of each.
const maxLogPods = 10

// logEntry is Argo CD's LogEntry, with Ferry's region, namespace and
// container.
type logEntry struct {
	Content      string    `json:"content"`
	TimeStamp    time.Time `json:"timeStamp"`
	TimeStampStr string    `json:"timeStampStr"`
	Last         bool      `json:"last"`
	PodName      string    `json:"podName,omitempty"`
	Namespace    string    `json:"namespace,omitempty"`
	Container    string    `json:"containerName,omitempty"`
	Region       string    `json:"region,omitempty"`
}

// appLogs is GET /api/v1/applications/{name}/logs: the logs of the app's
// pods, as Argo CD streams them: one JSON object per line, {"result":
// LogEntry}, the last one saying last: true. It takes Argo CD's
// parameters: podName, or group, kind and resourceName of a workload
// (default: every workload of the app); namespace, container, tailLines,
// sinceSeconds, follow, previous and filter (lines that contain it); and
// Ferry's region. A pod that is not the app's is not shown.
func (s *server) appLogs(w http.ResponseWriter, r *http.Request) {
	c, v := s.readApp(w, r)
	if v == nil || !s.authorize(w, c, rbac.Request{Resource: "logs", Action: "get", Object: object(v.ProjectOf(), v.Metadata.Name)}, false) {
		return
	}
	q := r.URL.Query()
	opts, ok := logOptions(w, q.Get)
	if !ok {
		return
	}
	dests := s.destinations(w, r, v)
	if dests == nil {
		return
	}
	type stream struct {
		rg *regionlive.Region
		c  regionlive.Container
	}
	var streams []stream
	for _, d := range dests {
		var keys []app.ResourceKey
		for _, k := range managedIn(v, d.Region) {
			if regionlive.IsWorkload(k) && !narrowed(q.Get("group"), k.Group) && !narrowed(q.Get("kind"), k.Kind) &&
				!narrowed(q.Get("resourceName"), k.Name) && !narrowed(q.Get("namespace"), k.Namespace) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		rg := s.region(w, v, d.Region)
		if rg == nil {
			return
		}
		cs, err := rg.Containers(r.Context(), keys, opts.Container)
		if err != nil && len(cs) == 0 {
			fail(w, http.StatusServiceUnavailable, "application %q: the pods in region %s: %v", v.Metadata.Name, d.Region, err)
			return
		}
		for _, ctr := range cs {
			if !narrowed(q.Get("podName"), ctr.Pod) {
				streams = append(streams, stream{rg, ctr})
			}
		}
	}
	pods := map[string]bool{}
	for _, st := range streams {
		pods[st.c.Region+"/"+st.c.Namespace+"/"+st.c.Pod] = true
	}
	if len(pods) > maxLogPods {
		fail(w, http.StatusBadRequest, "application %q: %d pods match, more than the %d whose logs one request streams (Argo CD's default maxPodLogsToRender): name a workload (kind and resourceName), a podName or a region",
			v.Metadata.Name, len(pods), maxLogPods)
		return
	}
	if len(streams) == 0 {
		fail(w, http.StatusNotFound, "application %q: no pod of its matches (give podName, or kind and resourceName of a Pod or a workload it deploys)", v.Metadata.Name)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(v)
		if flusher != nil {
			flusher.Flush()
		}
	}
	filter := q.Get("filter")
	copyStream := func(st stream) {
		err := st.rg.Logs(r.Context(), st.c, opts, func(text string, at time.Time) {
			if filter == "" || strings.Contains(text, filter) {
				send(map[string]logEntry{"result": {Content: text, TimeStamp: at, TimeStampStr: at.Format(time.RFC3339Nano),
					PodName: st.c.Pod, Namespace: st.c.Namespace, Container: st.c.Container, Region: st.c.Region}})
			}
		})
		if err != nil && r.Context().Err() == nil {
			send(map[string]apiError{"error": {Error: err.Error(), Code: grpcCodes[http.StatusServiceUnavailable], Message: err.Error()}})
		}
	}
	if opts.Follow {
		var wg sync.WaitGroup
		for _, st := range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				copyStream(st)
			}()
		}
		wg.Wait()
	} else {
		for _, st := range streams {
			copyStream(st)
		}
	}
	now := time.Now().UTC()
	send(map[string]logEntry{"result": {Last: true, TimeStamp: now, TimeStampStr: now.Format(time.RFC3339Nano)}})
}

// logOptions reads Argo CD's log parameters; a bad one is answered 400.
func logOptions(w http.ResponseWriter, get func(string) string) (regionlive.LogOptions, bool) {
	o := regionlive.LogOptions{Container: get("container"), Tail: -1}
	var errs []string
	if raw := get("tailLines"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, "tailLines="+strconv.Quote(raw)+": write a count of lines, e.g. tailLines=100")
		}
		o.Tail = n
	}
	if raw := get("sinceSeconds"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, "sinceSeconds="+strconv.Quote(raw)+": write a count of seconds, e.g. sinceSeconds=600")
		}
		o.Since = time.Duration(n) * time.Second
	}
	for _, b := range []struct {
		name string
		to   *bool
	}{{"follow", &o.Follow}, {"previous", &o.Previous}} {
		if raw := get(b.name); raw != "" {
			v, err := strconv.ParseBool(raw)
			if err != nil {
				errs = append(errs, b.name+"="+strconv.Quote(raw)+": write true or false")
			}
			*b.to = v
		}
	}
	if len(errs) > 0 {
		fail(w, http.StatusBadRequest, "%s", strings.Join(errs, "; "))
		return o, false
	}
	return o, true
}
