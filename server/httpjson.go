package main

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an error as Argo CD's API answers it (grpc-gateway's shape):
// the message twice, and the gRPC code of the status.
type apiError struct {
	Error   string `json:"error"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// gRPC codes of the HTTP statuses the server answers with.
var grpcCodes = map[int]int{
	http.StatusBadRequest: 3, http.StatusNotFound: 5, http.StatusConflict: 6, http.StatusForbidden: 7,
	http.StatusTooManyRequests: 8, http.StatusPreconditionFailed: 9, http.StatusInternalServerError: 13,
	http.StatusServiceUnavailable: 14, http.StatusUnauthorized: 16, http.StatusGatewayTimeout: 4,
}

// fail answers status with message.
func fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	writeJSON(w, status, apiError{Error: msg, Code: grpcCodes[status], Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// readJSON decodes the request's body into v; a body that does not decode
// is answered 400, naming what is wrong, and false returned.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "the request's body is not the JSON expected: %v", err)
		return false
	}
	return true
}
