import sys

from bench.overhead.run import main

sys.exit(main())
