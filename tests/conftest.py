import os
import sys

# The tooling is run as 'python3 -m zlctool...' from the top of the project.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
