-- Plain GET of the URL given to wrk; headers come from -H. Only adds the JSON report.
dofile("report.lua")
