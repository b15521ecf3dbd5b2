"""The tests' one toolbox: worlds, factories, worker processes and browser helpers, each once. Test modules
import from here, never from each other or from a conftest."""
