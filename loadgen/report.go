package main

import (
	"errors"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/status"
)

// detail is one call (or one fetch-all) as ghz lists it: latency in nanoseconds and its status code name.
type detail struct {
	Latency int64  `json:"latency"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
}

type percentile struct {
	Percentage int   `json:"percentage"`
	Latency    int64 `json:"latency"`
}

// ghzReport is the part of ghz's JSON report the harness reads (harness/drivers/report.py).
type ghzReport struct {
	Count                  int64            `json:"count"`
	Total                  int64            `json:"total"`
	Average                int64            `json:"average"`
	Fastest                int64            `json:"fastest"`
	Slowest                int64            `json:"slowest"`
	Rps                    float64          `json:"rps"`
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	LatencyDistribution    []percentile     `json:"latencyDistribution"`
	Details                []detail         `json:"details"`
	Options                map[string]any   `json:"options"`
}

// recorder collects details from many goroutines.
type recorder struct {
	mu      sync.Mutex
	details []detail
}

func (r *recorder) add(latency time.Duration, err error) {
	entry := detail{Latency: latency.Nanoseconds(), Status: "OK"}
	if err != nil {
		entry.Status, entry.Error = codeName(err), err.Error()
	}
	r.mu.Lock()
	r.details = append(r.details, entry)
	r.mu.Unlock()
}

// codeName is the gRPC status code's name as ghz writes it ("Unavailable"); "Incomplete" for a fetch-all
// that ended OK without every object exactly once; "Refused" for an Info reply with success false; for
// REST, "HTTP <status>" (or "Unavailable" when no answer came).
func codeName(err error) string {
	var incomplete incompleteError
	var refused refusedError
	var answer httpError
	switch {
	case errors.As(err, &incomplete):
		return "Incomplete"
	case errors.As(err, &refused):
		return "Refused"
	case errors.As(err, &answer):
		return answer.status
	}
	return status.Code(err).String()
}

// summary is the ghz-shaped report of the details, over wall time total.
func (r *recorder) summary(total time.Duration, options map[string]any) ghzReport {
	report := ghzReport{
		Count:                  int64(len(r.details)),
		Total:                  total.Nanoseconds(),
		StatusCodeDistribution: map[string]int64{},
		ErrorDistribution:      map[string]int64{},
		LatencyDistribution:    []percentile{},
		Details:                r.details,
		Options:                options,
	}
	var ok []int64
	for _, entry := range r.details {
		report.StatusCodeDistribution[entry.Status]++
		if entry.Error != "" {
			report.ErrorDistribution[entry.Error]++
		}
		if entry.Status == "OK" {
			ok = append(ok, entry.Latency)
		}
	}
	if total > 0 {
		report.Rps = float64(report.Count) / total.Seconds()
	}
	if len(ok) == 0 {
		return report
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i] < ok[j] })
	var sum int64
	for _, latency := range ok {
		sum += latency
	}
	report.Average, report.Fastest, report.Slowest = sum/int64(len(ok)), ok[0], ok[len(ok)-1]
	for _, p := range []int{10, 25, 50, 75, 90, 95, 99} {
		report.LatencyDistribution = append(report.LatencyDistribution, percentile{p, nearestRank(ok, p)})
	}
	return report
}

// nearestRank is the p-th percentile of sorted values (nearest-rank method).
func nearestRank(sorted []int64, p int) int64 {
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}
