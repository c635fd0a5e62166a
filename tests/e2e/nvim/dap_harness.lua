-- Headless Neovim harness for tests/e2e/test_nvim_dap.py: loads editors/nvim/taskdsl.lua with a
-- stand-in for nvim-dap's `dap` module (nvim-dap is packaged neither by Debian nor on npm), and
-- records what the config registers and what its consent step hands to the adapter.
--
--   nvim --headless -i NONE --noplugin -u dap_harness.lua
-- env: TASKDSL_E2E_CONFIG (taskdsl.lua), TASKDSL_E2E_PYTHON, TASKDSL_E2E_OUT, TASKDSL_E2E_PROGRAM
local out_path = assert(os.getenv('TASKDSL_E2E_OUT'), 'TASKDSL_E2E_OUT')
local result = {}

package.loaded['dap'] = { adapters = {}, configurations = {} }
vim.g.taskdsl = { python = os.getenv('TASKDSL_E2E_PYTHON') }
local ok, err = pcall(dofile, assert(os.getenv('TASKDSL_E2E_CONFIG'), 'TASKDSL_E2E_CONFIG'))
if not ok then
  result.error = tostring(err)
else
  local dap = package.loaded['dap']
  local adapter = dap.adapters.taskdsl
  result.adapter = { type = adapter.type, command = adapter.command, args = adapter.args }
  result.configurations = {}
  for _, c in ipairs(dap.configurations.taskxml or {}) do
    table.insert(result.configurations, { name = c.name, type = c.type, request = c.request, program = c.program,
                                          stopOnEntry = c.stopOnEntry })
  end
  -- the consent step: a configuration that claims an agreement is asked about all the same
  local launch = { type = 'taskdsl', request = 'launch', name = 'x', program = os.getenv('TASKDSL_E2E_PROGRAM'),
                   agreedPlan = string.rep('f', 64) }
  local asked = {}
  vim.fn.confirm = function(text, choices, default)
    table.insert(asked, text)
    return #asked == 1 and 1 or 2 -- agree the first time, cancel the second
  end
  adapter.enrich_config(launch, function(config) result.agreed = config end)
  adapter.enrich_config(launch, function(config) result.cancelled_but_launched = config end)
  result.asked = asked
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
vim.cmd('qall!')
