{ apiVersion: "v1" }
