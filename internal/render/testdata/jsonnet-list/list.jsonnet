[
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-' + i }, data: { n: std.toString(i) } }
  for i in std.range(1, 3)
]
