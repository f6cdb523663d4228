import sys

from jarvis.cli import main

sys.exit(main())
