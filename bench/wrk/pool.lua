-- POSTs from a pre-generated pool (wrk's LuaJIT has no HMAC, so the harness signs the
-- requests up front). args[1]: a file of lines "<path>\t<X-Service-Signature or empty>\t<body>".
-- Requests are formatted once in init(); request() only hands out the next one.
dofile("report.lua")

local threads = 0
function setup(thread)
  thread:set("thread_index", threads)
  threads = threads + 1
end

local pool = {}
local size = 0
local next_index = 0

function init(args)
  local path = args[1]
  if path == nil then error("pool.lua needs the pool file as its first argument") end
  for line in io.lines(path) do
    local target, signature, body = line:match("^([^\t]*)\t([^\t]*)\t(.*)$")
    if target ~= nil then
      local headers = { ["Content-Type"] = "application/json" }
      if signature ~= "" then headers["X-Service-Signature"] = signature end
      size = size + 1
      pool[size] = wrk.format("POST", target, headers, body)
    end
  end
  if size == 0 then error("empty request pool: " .. path) end
  -- Threads start at different places so they do not send the same body in lockstep.
  next_index = ((thread_index or 0) * 7919) % size
end

function request()
  next_index = next_index % size + 1
  return pool[next_index]
end
